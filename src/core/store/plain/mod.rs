//! The plain object tree: every key an object of its own at `url/key`. Nothing is laid over the
//! objects; naming it (`store: "plain"`) stops the detection of the other kinds.
use super::kind::{Container, Kind, Mounting};
use super::place::Place;
use crate::core::error::Result;
use crate::core::transport::{HttpClient, Objects};
use alloc::string::String;

pub struct Plain {
    url: String,
}

impl Kind for Plain {
    const NAME: &'static str = "plain";
    const ALIASES: &'static [&'static str] = &["http"];
    const STAGE: bool = false;

    fn new(_url: &str, _how: &Mounting) -> Result<Option<Self>> {
        Ok(None)
    }

    fn url(&self) -> &str {
        &self.url
    }

    fn key<'a>(&self, _url: &'a str) -> Option<&'a str> {
        None
    }

    async fn place<S: Objects, C: HttpClient>(&self, _below: &S, _c: &C, _key: &str) -> Result<Place> {
        Ok(Place::Missing)
    }

    async fn describe<S: Objects, C: HttpClient>(&self, _below: &S, _c: &C) -> Container {
        Container { kind: Self::NAME, url: self.url.clone(), comment: String::new(), version: String::new() }
    }
}
