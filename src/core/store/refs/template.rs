//! Templates as kerchunk writes them: literal text and `{{ expr }}`, where `expr` is a
//! template's or a `gen` dimension's name, a non-negative integer, or integers combined with
//! `+ - * // %`, unary minus and parentheses (Python's floor division and modulo; overflow and
//! division by zero are errors); `gen` dimensions (a range or a list of values).
use crate::core::json::Value;

#[derive(Clone, Copy)]
pub(super) enum Val<'a> {
    Int(i64),
    Text(&'a str),
}

type Eval<'a> = core::result::Result<Val<'a>, &'static str>;

fn int(v: Val) -> core::result::Result<i64, &'static str> {
    match v {
        Val::Int(n) => Ok(n),
        Val::Text(_) => Err("text in arithmetic"),
    }
}

const OVERFLOW: &str = "overflow or division by zero";

/// `{{ expr }}` evaluated as it is read: sum := product (('+' | '-') product)*; product :=
/// unary (('*' | '//' | '%') unary)*; unary := ('-' | '+') unary | '(' sum ')' | integer | name.
pub(super) struct Expr<'a> {
    pub(super) s: &'a [u8],
    pub(super) i: usize,
    pub(super) name: &'a dyn Fn(&str) -> Option<Val<'a>>,
}

impl<'a> Expr<'a> {
    pub(super) fn peek(&mut self) -> Option<u8> {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
        self.s.get(self.i).copied()
    }

    /// Operators binding at least as tightly as `level` (0: `+ -`, 1: `* // %`), left to right.
    pub(super) fn binary(&mut self, level: u8, depth: u32) -> Eval<'a> {
        let mut a = self.operand(level, depth)?;
        loop {
            let (op, n) = match (self.peek(), self.s.get(self.i + 1)) {
                (Some(c @ (b'+' | b'-')), _) if level == 0 => (c, 1),
                (Some(c @ (b'*' | b'%')), _) if level == 1 => (c, 1),
                (Some(b'/'), Some(b'/')) if level == 1 => (b'/', 2),
                _ => return Ok(a),
            };
            self.i += n;
            let (x, y) = (int(a)?, int(self.operand(level, depth)?)?);
            // Python's `//` and `%` round down.
            let r = x.checked_rem(y);
            let down = r.is_some_and(|r| r != 0 && (r < 0) != (y < 0));
            let v = match op {
                b'+' => x.checked_add(y),
                b'-' => x.checked_sub(y),
                b'*' => x.checked_mul(y),
                b'/' => x.checked_div(y).map(|q| q - i64::from(down)),
                _ => r.map(|r| if down { r + y } else { r }),
            };
            a = Val::Int(v.ok_or(OVERFLOW)?);
        }
    }

    fn operand(&mut self, level: u8, depth: u32) -> Eval<'a> {
        match level {
            0 => self.binary(1, depth),
            _ => self.unary(depth),
        }
    }

    fn unary(&mut self, depth: u32) -> Eval<'a> {
        if depth > 32 {
            return Err("nested too deeply");
        }
        match self.peek() {
            Some(c @ (b'-' | b'+')) => {
                self.i += 1;
                let x = int(self.unary(depth + 1)?)?;
                Ok(Val::Int(if c == b'-' { x.checked_neg().ok_or(OVERFLOW)? } else { x }))
            }
            Some(b'(') => {
                self.i += 1;
                let v = self.binary(0, depth + 1)?;
                if self.peek() != Some(b')') {
                    return Err("a `(` is not closed");
                }
                self.i += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_alphanumeric() || c == b'_' => {
                let at = self.i;
                while self.s.get(self.i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
                    self.i += 1;
                }
                let word = core::str::from_utf8(&self.s[at..self.i]).unwrap_or("");
                match c.is_ascii_digit() {
                    true => integer(word).and_then(|n| i64::try_from(n).ok()).map(Val::Int).ok_or("a bad integer"),
                    false => (self.name)(word).ok_or("an unknown name"),
                }
            }
            _ => Err("a missing operand"),
        }
    }
}

/// A `gen` dimension: a range (start, step, count) or a list of values.
pub(super) enum Dim<'v> {
    Range(i64, i64, u64),
    List(&'v [Value]),
}

impl<'v> Dim<'v> {
    pub(super) fn parse(v: &'v Value) -> Option<Dim<'v>> {
        if let Some(list) = v.as_array() {
            return Some(Dim::List(list));
        }
        let int = |k: &str, default: Option<i64>| v.get(k).map_or(default, Value::as_i64);
        let (start, stop, step) = (int("start", Some(0))?, int("stop", None)?, int("step", Some(1))?);
        let (span, by) = (stop.abs_diff(start), step.unsigned_abs());
        let n = match step {
            0 => return None,
            _ if (stop > start) != (step > 0) || span == 0 => 0,
            _ => span / by + u64::from(span % by != 0),
        };
        Some(Dim::Range(start, step, n))
    }

    pub(super) fn len(&self) -> u64 {
        match self {
            Dim::Range(_, _, n) => *n,
            Dim::List(l) => l.len() as u64,
        }
    }

    pub(super) fn at(&self, k: u64) -> Option<Val<'v>> {
        match self {
            // Within the range, so it fits: wrapping arithmetic gives it exactly.
            Dim::Range(start, step, _) => Some(Val::Int(start.wrapping_add(step.wrapping_mul(k as i64)))),
            Dim::List(l) => match l.get(k as usize)? {
                Value::String(s) => Some(Val::Text(s)),
                v => v.as_i64().map(Val::Int),
            },
        }
    }
}

/// A non-negative decimal integer, and nothing else.
pub(super) fn integer(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u64, |n, c| match c {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(c - b'0')),
        _ => None,
    })
}
