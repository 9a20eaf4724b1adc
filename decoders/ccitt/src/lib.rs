//! TIFF's bilevel fax strips and tiles (compressions 2, 3 and 4): `decode(stream, [width,
//! height, compression, flags])` → `height` rows of `width` bytes, 1 where the stream codes a
//! black pixel and 0 where white — the image's bits as libtiff stores them, before any
//! PhotometricInterpretation (as an uncompressed 1-bit image of the same bits reads).
//!
//! - compression 2: modified Huffman (T.4 1-D rows, no EOLs, each row from a byte boundary);
//! - compression 3: T.4 Group 3, rows after EOLs (fill bits before them skipped), 1-D, or 2-D
//!   when T4Options bit 0 is set (a tag bit after each EOL: 1 a 1-D row, 0 a 2-D row);
//! - compression 4: T.6 Group 4, 2-D rows, no EOLs, the first against an all-white line.
//!
//! `flags`: the T4Options or T6Options value, plus 2^32 when FillOrder is 2 (each byte's bits
//! least significant first). Uncompressed mode (option bit 1) is refused where the stream uses
//! it. A code that is no code, a run past the row, too few bits: a corrupt stream.
#![forbid(unsafe_code)]
extern crate alloc;

use abi::{count, Failure};
use alloc::format;
use alloc::vec::Vec;

abi::export_decoder!(decode);

// T.4 Tables 2 and 3: terminating codes (runs 0-63), make-up codes (64-1728, by 64), and the
// extended make-up codes both colours share (1792-2560, by 64).
const WHITE_TERMINATING: [&str; 64] = [
    "00110101", "000111", "0111", "1000", "1011", "1100", "1110", "1111", "10011", "10100", "00111", "01000", "001000",
    "000011", "110100", "110101", "101010", "101011", "0100111", "0001100", "0001000", "0010111", "0000011", "0000100",
    "0101000", "0101011", "0010011", "0100100", "0011000", "00000010", "00000011", "00011010", "00011011", "00010010",
    "00010011", "00010100", "00010101", "00010110", "00010111", "00101000", "00101001", "00101010", "00101011",
    "00101100", "00101101", "00000100", "00000101", "00001010", "00001011", "01010010", "01010011", "01010100",
    "01010101", "00100100", "00100101", "01011000", "01011001", "01011010", "01011011", "01001010", "01001011",
    "00110010", "00110011", "00110100",
];
const WHITE_MAKEUP: [&str; 27] = [
    "11011",
    "10010",
    "010111",
    "0110111",
    "00110110",
    "00110111",
    "01100100",
    "01100101",
    "01101000",
    "01100111",
    "011001100",
    "011001101",
    "011010010",
    "011010011",
    "011010100",
    "011010101",
    "011010110",
    "011010111",
    "011011000",
    "011011001",
    "011011010",
    "011011011",
    "010011000",
    "010011001",
    "010011010",
    "011000",
    "010011011",
];
const BLACK_TERMINATING: [&str; 64] = [
    "0000110111",
    "010",
    "11",
    "10",
    "011",
    "0011",
    "0010",
    "00011",
    "000101",
    "000100",
    "0000100",
    "0000101",
    "0000111",
    "00000100",
    "00000111",
    "000011000",
    "0000010111",
    "0000011000",
    "0000001000",
    "00001100111",
    "00001101000",
    "00001101100",
    "00000110111",
    "00000101000",
    "00000010111",
    "00000011000",
    "000011001010",
    "000011001011",
    "000011001100",
    "000011001101",
    "000001101000",
    "000001101001",
    "000001101010",
    "000001101011",
    "000011010010",
    "000011010011",
    "000011010100",
    "000011010101",
    "000011010110",
    "000011010111",
    "000001101100",
    "000001101101",
    "000011011010",
    "000011011011",
    "000001010100",
    "000001010101",
    "000001010110",
    "000001010111",
    "000001100100",
    "000001100101",
    "000001010010",
    "000001010011",
    "000000100100",
    "000000110111",
    "000000111000",
    "000000100111",
    "000000101000",
    "000001011000",
    "000001011001",
    "000000101011",
    "000000101100",
    "000001011010",
    "000001100110",
    "000001100111",
];
const BLACK_MAKEUP: [&str; 27] = [
    "0000001111",
    "000011001000",
    "000011001001",
    "000001011011",
    "000000110011",
    "000000110100",
    "000000110101",
    "0000001101100",
    "0000001101101",
    "0000001001010",
    "0000001001011",
    "0000001001100",
    "0000001001101",
    "0000001110010",
    "0000001110011",
    "0000001110100",
    "0000001110101",
    "0000001110110",
    "0000001110111",
    "0000001010010",
    "0000001010011",
    "0000001010100",
    "0000001010101",
    "0000001011010",
    "0000001011011",
    "0000001100100",
    "0000001100101",
];
const EXTENDED_MAKEUP: [&str; 13] = [
    "00000001000",
    "00000001100",
    "00000001101",
    "000000010010",
    "000000010011",
    "000000010100",
    "000000010101",
    "000000010110",
    "000000010111",
    "000000011100",
    "000000011101",
    "000000011110",
    "000000011111",
];
const EOL: &str = "000000000001";
/// The value standing for an EOL in a run table.
const EOL_VALUE: u16 = 0xFFF;
/// The longest code, in bits: the run tables are indexed by the next 13 bits.
const LONGEST: u32 = 13;

/// A run table: by the next 13 bits, the code's length (high 4 bits) and run (low 12), 0 where
/// no code starts so.
fn run_table(terminating: &[&str; 64], makeup: &[&str; 27]) -> Vec<u16> {
    let mut t = alloc::vec![0u16; 1 << LONGEST];
    let codes = terminating.iter().enumerate().map(|(k, c)| (*c, k as u16));
    let makeups = makeup.iter().chain(EXTENDED_MAKEUP.iter()).enumerate().map(|(k, c)| (*c, 64 * (k as u16 + 1)));
    for (code, value) in codes.chain(makeups).chain([(EOL, EOL_VALUE)]) {
        let len = code.len() as u32;
        let bits = u32::from_str_radix(code, 2).unwrap_or(0);
        let start = (bits << (LONGEST - len)) as usize;
        for e in t.iter_mut().skip(start).take(1 << (LONGEST - len)) {
            *e = ((len as u16) << 12) | value;
        }
    }
    t
}

/// A stream's bits, most significant first.
struct Bits<'a> {
    data: &'a [u8],
    /// The next bit's index.
    at: usize,
    end: usize,
}

impl Bits<'_> {
    /// The next `n` (1..=24) bits, zeros past the end.
    fn peek(&self, n: u32) -> u32 {
        let byte = self.at / 8;
        let word = (0..4).fold(0u32, |w, k| (w << 8) | u32::from(self.data.get(byte + k).copied().unwrap_or(0)));
        (word << (self.at % 8)) >> (32 - n)
    }
    fn skip(&mut self, n: u32, row: u64) -> Result<(), Failure> {
        self.at = self.at.saturating_add(n as usize);
        if self.at > self.end {
            return Err(Failure::corrupt(format!("row {row}: the stream ends inside it")));
        }
        Ok(())
    }
    /// Skip an EOL (after any fill bits) if one comes next.
    fn eol(&mut self) -> bool {
        let mut p = self.at;
        while p < self.end && self.data.get(p / 8).is_some_and(|b| b & (0x80 >> (p % 8)) == 0) {
            p += 1;
        }
        let found = p - self.at >= 11 && p < self.end;
        if found {
            self.at = p + 1;
        }
        found
    }
}

/// The run tables (white, black).
struct Tables {
    white: Vec<u16>,
    black: Vec<u16>,
}

/// One run of `black` pixels or white ones (make-up codes, then a terminating code), at most
/// `room` pixels.
fn run(bits: &mut Bits, t: &Tables, black: bool, room: u32, row: u64) -> Result<u32, Failure> {
    let table = if black { &t.black } else { &t.white };
    let mut total = 0u32;
    loop {
        let e = table.get(bits.peek(LONGEST) as usize).copied().unwrap_or(0);
        let (len, value) = (u32::from(e >> 12), e & 0xFFF);
        if len == 0 {
            if bits.peek(12) == 0b0000_0000_1111 {
                return Err(Failure::unsupported(format!("row {row}: uncompressed mode is not read")));
            }
            return Err(Failure::corrupt(format!("row {row}: a bit pattern that is no run code")));
        }
        if value == EOL_VALUE {
            return Err(Failure::corrupt(format!("row {row}: an EOL before the row's end")));
        }
        bits.skip(len, row)?;
        total = total.saturating_add(u32::from(value));
        if total > room {
            return Err(Failure::corrupt(format!("row {row}: a run past the row's end")));
        }
        if value < 64 {
            return Ok(total);
        }
    }
}

/// A 1-D row's changing elements (where the colour changes, from white) into `cur`.
fn row_1d(bits: &mut Bits, t: &Tables, width: u32, cur: &mut Vec<u32>, row: u64) -> Result<(), Failure> {
    cur.clear();
    let (mut a0, mut black) = (0u32, false);
    loop {
        a0 += run(bits, t, black, width - a0, row)?;
        if a0 == width {
            return Ok(());
        }
        cur.push(a0);
        black = !black;
    }
}

/// The 2-D modes (T.4 Table 4).
enum Mode {
    Pass,
    Horizontal,
    Vertical(i64),
}

fn mode(bits: &mut Bits, row: u64) -> Result<Mode, Failure> {
    let p = bits.peek(7);
    let (len, m) = match p {
        _ if p >> 6 == 1 => (1, Mode::Vertical(0)),
        _ if p >> 4 == 0b011 => (3, Mode::Vertical(1)),
        _ if p >> 4 == 0b010 => (3, Mode::Vertical(-1)),
        _ if p >> 4 == 0b001 => (3, Mode::Horizontal),
        _ if p >> 3 == 0b0001 => (4, Mode::Pass),
        _ if p >> 1 == 0b000011 => (6, Mode::Vertical(2)),
        _ if p >> 1 == 0b000010 => (6, Mode::Vertical(-2)),
        0b0000011 => (7, Mode::Vertical(3)),
        0b0000010 => (7, Mode::Vertical(-3)),
        0b0000001 => return Err(Failure::unsupported(format!("row {row}: uncompressed mode is not read"))),
        _ => return Err(Failure::corrupt(format!("row {row}: an EOL or no 2-D mode code before the row's end"))),
    };
    bits.skip(len, row)?;
    Ok(m)
}

/// A 2-D row's changing elements into `cur`, against those of the row above, `above`.
fn row_2d(
    bits: &mut Bits,
    t: &Tables,
    width: u32,
    (above, cur): (&[u32], &mut Vec<u32>),
    row: u64,
) -> Result<(), Failure> {
    cur.clear();
    let w = i64::from(width);
    let at = |k: usize| above.get(k).map_or(w, |&x| i64::from(x));
    let (mut a0, mut black, mut k) = (-1i64, false, 0usize);
    let bad = |what: &str| Failure::corrupt(format!("row {row}: {what}"));
    while a0 < w {
        // b1: the first change right of a0 to the colour opposite a0's (even ones turn black).
        k = k.saturating_sub(1);
        while at(k) < w && (at(k) <= a0 || (k % 2 == 1) != black) {
            k += 1;
        }
        let (b1, b2) = (at(k), at(k + 1));
        match mode(bits, row)? {
            Mode::Pass => a0 = b2,
            Mode::Horizontal => {
                let start = a0.max(0);
                let a1 = start + i64::from(run(bits, t, black, (w - start) as u32, row)?);
                let a2 = a1 + i64::from(run(bits, t, !black, (w - a1) as u32, row)?);
                cur.extend([a1, a2].into_iter().filter(|&a| a < w).map(|a| a as u32));
                a0 = a2;
            }
            Mode::Vertical(d) => {
                let a1 = b1 + d;
                if a1 <= a0 || a1 > w {
                    return Err(bad("a vertical mode outside the row"));
                }
                if a1 < w {
                    cur.push(a1 as u32);
                }
                a0 = a1;
                black = !black;
            }
        }
        if cur.len() > above.len() + width as usize + 2 {
            return Err(bad("more changes than pixels"));
        }
    }
    Ok(())
}

/// A row's pixels from its changing elements.
fn render(changes: &[u32], out: &mut [u8]) {
    let (mut at, mut colour) = (0usize, 0u8);
    for &c in changes {
        let c = (c as usize).min(out.len());
        if let Some(s) = out.get_mut(at..c) {
            s.fill(colour);
        }
        at = at.max(c);
        colour ^= 1;
    }
    if let Some(s) = out.get_mut(at..) {
        s.fill(colour);
    }
}

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (width, height) = (count(args, 0, "width")?, count(args, 1, "height")?);
    let (compression, flags) = (count(args, 2, "compression")?, count(args, 3, "flags")?);
    let options = flags & 0xFFFF_FFFF;
    let known = match compression {
        2 => 0,
        3 => 0b111,
        4 => 0b10,
        n => return Err(Failure::unsupported(format!("compression {n} is no fax compression"))),
    };
    if options & !known != 0 {
        return Err(Failure::unsupported(format!("compression {compression} with options {options}")));
    }
    let width = u32::try_from(width).ok().filter(|&w| w > 0 && w < 1 << 30).ok_or_else(|| Failure::corrupt("width"))?;
    let n =
        usize::try_from(u64::from(width).saturating_mul(height)).map_err(|_| Failure::too_large("too many pixels"))?;
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| Failure::too_large(format!("cannot allocate {n} pixels")))?;
    out.resize(n, 0);
    let reversed: Vec<u8>;
    let data = if flags >> 32 & 1 == 1 {
        reversed = data.iter().map(|b| b.reverse_bits()).collect();
        &reversed
    } else {
        data
    };
    let mut bits = Bits { data, at: 0, end: data.len().saturating_mul(8) };
    // Uncompressed mode where the options do not allow it: a corrupt stream.
    rows(&mut bits, &mut out, (width, compression, options)).map_err(|f| match f.code {
        abi::UNSUPPORTED if options & 2 == 0 => {
            Failure::corrupt(format!("{}, which the options do not allow", f.message))
        }
        _ => f,
    })?;
    Ok(out)
}

/// Every row into `out`.
fn rows(bits: &mut Bits, out: &mut [u8], (width, compression, options): (u32, u64, u64)) -> Result<(), Failure> {
    let row_len = width as usize;
    let t = Tables {
        white: run_table(&WHITE_TERMINATING, &WHITE_MAKEUP),
        black: run_table(&BLACK_TERMINATING, &BLACK_MAKEUP),
    };
    let (mut above, mut cur) = (Vec::new(), Vec::new());
    for (row, px) in out.chunks_exact_mut(row_len).enumerate() {
        let row = row as u64;
        match compression {
            2 => {
                row_1d(bits, &t, width, &mut cur, row)?;
                bits.at = bits.at.div_ceil(8).saturating_mul(8);
            }
            3 => {
                let eol = bits.eol();
                let one_d = match options & 1 {
                    0 => true,
                    _ if !eol => {
                        return Err(Failure::corrupt(format!("row {row}: no EOL before a row of a 2-D stream")))
                    }
                    _ => {
                        let tag = bits.peek(1);
                        bits.skip(1, row)?;
                        tag == 1
                    }
                };
                match one_d {
                    true => row_1d(bits, &t, width, &mut cur, row)?,
                    false => row_2d(bits, &t, width, (&above, &mut cur), row)?,
                }
            }
            _ => row_2d(bits, &t, width, (&above, &mut cur), row)?,
        }
        render(&cur, px);
        core::mem::swap(&mut above, &mut cur);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No code is a prefix of another (each fills its own slots of the table).
    #[test]
    fn codes_are_prefix_free() {
        for (term, makeup) in [(&WHITE_TERMINATING, &WHITE_MAKEUP), (&BLACK_TERMINATING, &BLACK_MAKEUP)] {
            let all: Vec<&str> =
                term.iter().chain(makeup.iter()).chain(EXTENDED_MAKEUP.iter()).chain([&EOL]).copied().collect();
            for (i, a) in all.iter().enumerate() {
                for (j, b) in all.iter().enumerate() {
                    assert!(i == j || !b.starts_with(a), "{a} is a prefix of {b}");
                }
            }
            let t = run_table(term, makeup);
            let filled: u32 = all.iter().map(|c| 1u32 << (LONGEST - c.len() as u32)).sum();
            assert_eq!(t.iter().filter(|&&e| e != 0).count() as u32, filled);
        }
    }

    fn bits(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        s.as_bytes()
            .chunks(8)
            .map(|c| c.iter().enumerate().fold(0u8, |b, (k, &x)| b | (u8::from(x == b'1') << (7 - k))))
            .collect()
    }

    #[test]
    fn rows_of_each_compression() {
        // 10 pixels: white 3, black 4, white 3 (MH: white 3 = 1000, black 4 = 011, white 3 = 1000),
        // then all white (white 10 = 00111); each row from a byte.
        let mh = bits("1000 011 1000 00000 00111 000");
        let want = [0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(decode(&mh, &[10.0, 2.0, 2.0, 0.0]).unwrap(), want);
        // Group 3 1-D: EOLs before each row, no alignment.
        let g3 = bits("000000000001 1000 011 1000 000000000001 00111 0000");
        assert_eq!(decode(&g3, &[10.0, 2.0, 3.0, 0.0]).unwrap(), want);
        // FillOrder 2: the same bytes, each reversed.
        let lsb: Vec<u8> = g3.iter().map(|b| b.reverse_bits()).collect();
        assert_eq!(decode(&lsb, &[10.0, 2.0, 3.0, (1u64 << 32) as f64]).unwrap(), want);
        // Group 4: row 0 horizontal (001, white 3, black 4) then V0 for b1 = 10 … the second
        // change at 7: horizontal, white 0… simpler: H(3,4), V0 (b1 = end: a1 = 10).
        // Row 0: H 001 1000 011 → changes 3, 7; then a0 = 7 (white), b1 = 10: V0 → row done.
        // Row 1: b1 = 3: VL... P (0001): b2 = 7, a0 = 7; b1 = 10: V0.  → all white.
        let g4 = bits("001 1000 011 1  0001 1");
        assert_eq!(decode(&g4, &[10.0, 2.0, 4.0, 0.0]).unwrap(), want);
        // Group 3 2-D: EOL + 1 (a 1-D row), EOL + 0 (a 2-D row).
        let g32 = bits("000000000001 1 1000 011 1000 000000000001 0 0001 1");
        assert_eq!(decode(&g32, &[10.0, 2.0, 3.0, 1.0]).unwrap(), want);
    }

    #[test]
    fn bad_streams_are_failures() {
        let g4 = bits("001 1000 011 1  0001 1");
        // Too few bits, a run past the row, a code that is none, uncompressed mode.
        assert_eq!(decode(&g4[..1], &[10.0, 2.0, 4.0, 0.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(&g4, &[6.0, 2.0, 4.0, 0.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(&[0, 0, 0, 0], &[10.0, 1.0, 2.0, 0.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(&bits("0000001 111"), &[10.0, 1.0, 4.0, 2.0]).unwrap_err().code, abi::UNSUPPORTED);
        assert_eq!(decode(&bits("0000001 111"), &[10.0, 1.0, 4.0, 0.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(&g4, &[10.0, 2.0, 4.0, 4.0]).unwrap_err().code, abi::UNSUPPORTED);
        assert_eq!(decode(&g4, &[10.0, 2.0, 5.0, 0.0]).unwrap_err().code, abi::UNSUPPORTED);
        // Every cut and every flipped bit: a failure or some pixels, never a panic.
        for cut in 0..g4.len() {
            let _ = decode(&g4[..cut], &[10.0, 2.0, 4.0, 0.0]);
        }
        for bit in 0..g4.len() * 8 {
            let mut d = g4.clone();
            d[bit / 8] ^= 0x80 >> (bit % 8);
            let _ = decode(&d, &[10.0, 2.0, 4.0, 0.0]);
        }
    }
}
