//! Serialising strings: [`write_str`]. (Values and objects write themselves, in `value.rs`.)
use alloc::string::String;

/// `s` as a JSON string literal: `"`, `\` and control characters escaped (as serde_json and
/// `JSON.stringify` do), everything else as is.
pub fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut run = 0;
    for (i, c) in s.bytes().enumerate() {
        let esc = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(s.get(run..i).unwrap_or(""));
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 15) as usize] as char);
        } else {
            out.push_str(esc);
        }
        run = i + 1;
    }
    out.push_str(s.get(run..).unwrap_or(""));
    out.push('"');
}
