//! A JSON serializer for one connection's report: the same bytes as
//! `serde_json::to_writer` (its compact form), written faster.
//!
//! With `--json` on many short connections, the output thread was the
//! slowest of the pass, and two thirds of it was serde_json doing work
//! whose result is known: escaping struct field names (identifiers, which
//! never need it) byte by byte, and escaping values that, nearly always,
//! contain nothing to escape. Here a field name is copied as it is, and a
//! string is checked eight bytes at a time and copied whole when clean.
//! Numbers are written by serde_json's own formatter, so they are the same
//! digits; everything else follows serde_json's choices (non-finite floats
//! are `null`, a newtype variant is `{"name":value}`, map keys are strings).
//! `tests` below holds the bytes to serde_json's, value kind by value kind.

use serde::ser::{self, Impossible, Serialize};

/// Appends `value` as compact JSON to `out`.
pub fn to_vec<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(&mut Json { out })
}

/// Why a value could not be written (a map key that is not a string or a
/// number, or a value's own `Serialize` refusing).
#[derive(Debug)]
pub struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        std::io::Error::other(e)
    }
}

struct Json<'a> {
    out: &'a mut Vec<u8>,
}

/// The escape of each byte: 0 none, `u` as `\u00XX`, else `\` and this.
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Whether any of these eight bytes is below 0x20, `"` or `\`.
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    control | has_zero(word ^ (ONES * b'"' as u64)) | has_zero(word ^ (ONES * b'\\' as u64)) != 0
}

/// Whether none of these bytes needs an escape: eight at a time, the
/// last few padded with spaces (which need none).
fn is_clean(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(8);
    for chunk in chunks.by_ref() {
        if needs_escape(u64::from_le_bytes(chunk.try_into().expect("eight bytes"))) {
            return false;
        }
    }
    let mut last = [b' '; 8];
    copy_short(&mut last, chunks.remainder());
    !needs_escape(u64::from_le_bytes(last))
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let n = bytes.len();
    if is_clean(bytes) {
        if n <= SHORT {
            // Quotes and all in one piece (names, addresses, messages).
            let at = out.len();
            out.extend_from_slice(&[0u8; SHORT + 2]);
            let room = &mut out[at..at + SHORT + 2];
            room[0] = b'"';
            copy_short(&mut room[1..], bytes);
            room[n + 1] = b'"';
            out.truncate(at + n + 2);
        } else {
            out.reserve(n + 2);
            out.push(b'"');
            out.extend_from_slice(bytes);
            out.push(b'"');
        }
        return;
    }
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let e = ESCAPE[b as usize];
        if e == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        if e == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xf) as usize]);
        } else {
            out.extend_from_slice(&[b'\\', e]);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The most bytes [`put`] copies in fixed-size pieces.
const SHORT: usize = 32;

/// Appends `bytes` to `out`. What this writer appends is nearly all short
/// (field names, numbers: a SYN flood's report is ~70 fields of a few
/// bytes each), and a call to `memcpy` for a few bytes costs more than
/// the copy: a short run is copied as two fixed-size pieces that overlap
/// (the compiler makes each a load and a store), into room made by
/// appending a fixed-size block and taken back to the run's length.
#[inline(always)]
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    if n > SHORT {
        out.extend_from_slice(bytes);
        return;
    }
    let at = out.len();
    out.extend_from_slice(&[0u8; SHORT]);
    let room = &mut out[at..at + SHORT];
    copy_short(room, bytes);
    out.truncate(at + n);
}

/// Copies `bytes` (at most [`SHORT`]) to the start of `room`.
#[inline(always)]
fn copy_short(room: &mut [u8], bytes: &[u8]) {
    let n = bytes.len();
    if n >= 16 {
        room[..16].copy_from_slice(&bytes[..16]);
        room[n - 16..n].copy_from_slice(&bytes[n - 16..]);
    } else if n >= 8 {
        room[..8].copy_from_slice(&bytes[..8]);
        room[n - 8..n].copy_from_slice(&bytes[n - 8..]);
    } else if n >= 4 {
        room[..4].copy_from_slice(&bytes[..4]);
        room[n - 4..n].copy_from_slice(&bytes[n - 4..]);
    } else if n > 0 {
        // One, two or three bytes: the first, the middle and the last.
        room[0] = bytes[0];
        room[n / 2] = bytes[n / 2];
        room[n - 1] = bytes[n - 1];
    }
}

macro_rules! integer {
    ($($method:ident($t:ty);)*) => {$(
        #[inline]
        fn $method(self, v: $t) -> Result<(), Error> {
            // itoa, as serde_json writes integers: the same digits.
            put(self.out, itoa::Buffer::new().format(v).as_bytes());
            Ok(())
        }
    )*};
}

impl<'a, 'b> ser::Serializer for &'b mut Json<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'b>;
    type SerializeTuple = Compound<'a, 'b>;
    type SerializeTupleStruct = Compound<'a, 'b>;
    type SerializeTupleVariant = Compound<'a, 'b>;
    type SerializeMap = Compound<'a, 'b>;
    type SerializeStruct = Compound<'a, 'b>;
    type SerializeStructVariant = Compound<'a, 'b>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    integer! {
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if v.is_finite() {
            // zmij, as serde_json writes floats: the same digits.
            put(self.out, zmij::Buffer::new().format_finite(v).as_bytes());
        } else {
            self.out.extend_from_slice(b"null");
        }
        Ok(())
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if v.is_finite() {
            put(self.out, zmij::Buffer::new().format_finite(v).as_bytes());
        } else {
            self.out.extend_from_slice(b"null");
        }
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(b)?;
        }
        seq.end()
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, 'b>, Error> {
        self.out.push(b'[');
        if len == Some(0) {
            self.out.push(b']');
            return Ok(Compound::empty(self));
        }
        Ok(Compound::open(self, b']'))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, 'b>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        let mut c = self.serialize_seq(Some(len))?;
        c.variant = true;
        Ok(c)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, 'b>, Error> {
        self.out.push(b'{');
        if len == Some(0) {
            self.out.push(b'}');
            return Ok(Compound::empty(self));
        }
        Ok(Compound::open(self, b'}'))
    }

    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a, 'b>, Error> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        let mut c = self.serialize_map(Some(len))?;
        c.variant = true;
        Ok(c)
    }
}

/// An array or object being written.
pub struct Compound<'a, 'b> {
    json: &'b mut Json<'a>,
    /// Nothing written yet (the next element needs no comma).
    first: bool,
    /// Its closing bracket, or 0 when already closed (declared empty).
    close: u8,
    /// Inside a variant's `{"name":...}`: one more brace to close.
    variant: bool,
}

impl<'a, 'b> Compound<'a, 'b> {
    fn open(json: &'b mut Json<'a>, close: u8) -> Self {
        Compound {
            json,
            first: true,
            close,
            variant: false,
        }
    }

    fn empty(json: &'b mut Json<'a>) -> Self {
        Compound {
            json,
            first: true,
            close: 0,
            variant: false,
        }
    }

    fn comma(&mut self) {
        if !self.first {
            self.json.out.push(b',');
        }
        self.first = false;
    }

    fn finish(self) -> Result<(), Error> {
        if self.close != 0 {
            self.json.out.push(self.close);
        }
        if self.variant {
            self.json.out.push(b'}');
        }
        Ok(())
    }

    /// A field name: an identifier, copied without the escape check
    /// (with its comma, quotes and colon, in one piece when short).
    #[inline(always)]
    fn field(&mut self, key: &'static str) {
        let first = std::mem::replace(&mut self.first, false);
        let out = &mut *self.json.out;
        let key = key.as_bytes();
        let n = key.len();
        if n > SHORT {
            out.extend_from_slice(if first { b"\"" } else { b",\"" });
            out.extend_from_slice(key);
            out.extend_from_slice(b"\":");
            return;
        }
        // `,"` + name + `":`, at most SHORT + 4 bytes.
        let at = out.len();
        out.extend_from_slice(&[0u8; SHORT + 4]);
        let room = &mut out[at..at + SHORT + 4];
        room[0] = b',';
        let start = usize::from(!first);
        room[start] = b'"';
        copy_short(&mut room[start + 1..], key);
        room[start + 1 + n] = b'"';
        room[start + 2 + n] = b':';
        out.truncate(at + start + n + 3);
    }
}

/// Arrays, tuples and tuple variants: elements one after the other.
macro_rules! elements {
    ($($trait:ident::$method:ident;)*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.comma();
                value.serialize(&mut *self.json)
            }

            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    )*};
}

elements! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(MapKey {
            out: &mut *self.json.out,
        })?;
        self.json.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.json)
    }

    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

/// Structs and struct variants: named fields.
macro_rules! fields {
    ($($trait:ident;)*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            // Inlined into each struct's `serialize`: called once per
            // field, its call and register saves cost more than the field.
            #[inline(always)]
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.field(key);
                value.serialize(&mut *self.json)
            }

            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    )*};
}

fields! {
    SerializeStruct;
    SerializeStructVariant;
}

/// A map key: JSON keys are strings, so numbers, booleans and unit
/// variants are quoted, as serde_json does.
struct MapKey<'o> {
    out: &'o mut Vec<u8>,
}

fn key_must_be_a_string() -> Error {
    Error("key must be a string".into())
}

impl MapKey<'_> {
    /// A value written as the value serializer writes it, in quotes.
    fn quoted(self, write: impl FnOnce(&mut Json<'_>) -> Result<(), Error>) -> Result<(), Error> {
        self.out.push(b'"');
        write(&mut Json {
            out: &mut *self.out,
        })?;
        self.out.push(b'"');
        Ok(())
    }

    fn finite(v: f64) -> Result<(), Error> {
        if v.is_finite() {
            Ok(())
        } else {
            Err(Error("float key must be finite".into()))
        }
    }
}

macro_rules! quoted {
    ($($method:ident($t:ty);)*) => {$(
        fn $method(self, v: $t) -> Result<(), Error> {
            self.quoted(|json| json.$method(v))
        }
    )*};
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    quoted! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        Self::finite(v.into())?;
        self.quoted(|json| json.serialize_f32(v))
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        Self::finite(v)?;
        self.quoted(|json| json.serialize_f64(v))
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        Json { out: self.out }.serialize_char(v)
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        Json { out: self.out }.serialize_str(v)
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        write_str(self.out, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::to_vec;

    /// The bytes serde_json writes, and ours.
    fn both<T: Serialize + ?Sized>(value: &T) -> (String, String) {
        let theirs = serde_json::to_string(value).expect("serde_json writes it");
        let mut ours = Vec::new();
        to_vec(&mut ours, value).expect("written");
        (theirs, String::from_utf8(ours).expect("UTF-8"))
    }

    fn same<T: Serialize + ?Sized>(value: &T) {
        let (theirs, ours) = both(value);
        assert_eq!(ours, theirs);
    }

    /// Field names and numbers of every length around the short-copy
    /// pieces (0-3, 4, 8, 16 bytes, the most copied in pieces, beyond it),
    /// first in their object and after a comma.
    #[test]
    fn names_and_numbers_of_every_length_are_written_whole() {
        struct Fields(Vec<&'static str>);
        impl Serialize for Fields {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                let mut st = s.serialize_struct("Fields", self.0.len())?;
                for (i, name) in self.0.iter().enumerate() {
                    st.serialize_field(name, &(10u64.pow(i as u32 % 20) + 7))?;
                }
                st.end()
            }
        }
        let alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN";
        for len in 1..=alphabet.len() {
            let name: &'static str = &alphabet[..len];
            let other: &'static str = &alphabet[alphabet.len() - len..];
            same(&Fields(vec![name]));
            same(&Fields(vec![name, other, name]));
        }
        let numbers: Vec<u64> = (0..20)
            .map(|e| 10u64.pow(e) - 1)
            .chain([u64::MAX])
            .collect();
        same(&numbers);
        let signed: Vec<i64> = numbers.iter().map(|&n| -((n / 2) as i64)).collect();
        same(&signed);
        let floats = [
            0.0,
            -0.0,
            1.5,
            1e-300,
            123456.789,
            f64::MAX,
            f64::MIN_POSITIVE,
        ];
        same(&floats);
        same(&floats.map(|f| f as f32));
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        // Every byte below 0x20, the two that JSON escapes, and text around
        // them at every offset within an eight-byte word.
        for b in (0u8..0x20).chain([b'"', b'\\', b'/', 0x7f]) {
            let c = char::from(b);
            for pad in 0..17 {
                let before = "a".repeat(pad);
                same(&format!("{before}{c}"));
                same(&format!("{before}{c}tail of the string"));
                same(&format!("{c}{before}{c}"));
            }
        }
        // Clean strings of every length around the pieces they are
        // copied in, and escapes at their ends.
        for n in 0..=40 {
            let clean: String = ('a'..='z').cycle().take(n).collect();
            same(&clean);
            same(&format!("{clean}\n"));
            same(&format!("\"{clean}"));
        }
        for s in [
            "",
            "plain",
            "exactly8",
            "sixteen bytes ok",
            "naïve café — 日本語 🦀",
            "ends with quote\"",
            "\\\\\\\\\\\\\\\\",
            "\u{2028}\u{2029}",
        ] {
            same(s);
        }
        same(&'"');
        same(&'\n');
        same(&'é');
    }

    #[test]
    fn numbers_are_serde_json_s_digits() {
        for v in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1.5e-7,
            123456789.125,
            1e21,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            same(&v);
            same(&(v as f32));
        }
        same(&[u64::MAX, 0, 7]);
        same(&[i64::MIN, -1, 0]);
        same(&(u128::MAX, i128::MIN, 255u8, -128i8, 65535u16, -32768i16));
        same(&(u32::MAX, i32::MIN, true, false));
    }

    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Shape {
        Unit,
        Newtype(u32),
        Tuple(u8, String),
        EmptyTuple(),
        Struct { a: Option<f64>, b: Vec<u8> },
        EmptyStruct {},
    }

    #[derive(Serialize)]
    struct Inner {
        x: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        maybe: Option<String>,
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Newtype(f64);

    #[derive(Serialize)]
    struct Everything<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        shapes: Vec<Shape>,
        nothing: Option<u8>,
        something: Option<Inner>,
        skipped: Inner,
        empty_vec: Vec<u32>,
        empty_map: BTreeMap<String, u8>,
        by_number: BTreeMap<u16, &'a str>,
        by_signed: BTreeMap<i64, bool>,
        by_bool: BTreeMap<bool, ()>,
        by_char: BTreeMap<char, Unit>,
        by_variant: BTreeMap<Key, Newtype>,
        #[serde(with = "serde_bytes_like")]
        bytes: &'a [u8],
        tuple: (u8, (), Unit),
        #[serde(flatten)]
        flattened: Inner,
        nested: Vec<Vec<Option<Shape>>>,
    }

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    enum Key {
        First,
        Second,
    }

    mod serde_bytes_like {
        pub fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(b)
        }
    }

    #[test]
    fn every_kind_of_value_is_written_as_serde_json_writes_it() {
        let v = Everything {
            kind: "connection",
            shapes: vec![
                Shape::Unit,
                Shape::Newtype(7),
                Shape::Tuple(1, "t\"wo".into()),
                Shape::EmptyTuple(),
                Shape::Struct {
                    a: Some(f64::NAN),
                    b: vec![],
                },
                Shape::Struct {
                    a: Some(2.5),
                    b: vec![1, 2],
                },
                Shape::EmptyStruct {},
            ],
            nothing: None,
            something: Some(Inner {
                x: 1,
                maybe: Some("yes".into()),
            }),
            skipped: Inner { x: 2, maybe: None },
            empty_vec: vec![],
            empty_map: BTreeMap::new(),
            by_number: [(443, "https"), (80, "http")].into_iter().collect(),
            by_signed: [(-1, true), (5, false)].into_iter().collect(),
            by_bool: [(true, ()), (false, ())].into_iter().collect(),
            by_char: [('"', Unit), ('a', Unit)].into_iter().collect(),
            by_variant: [(Key::First, Newtype(1.0)), (Key::Second, Newtype(-0.5))]
                .into_iter()
                .collect(),
            bytes: &[0, 255, 16],
            tuple: (9, (), Unit),
            flattened: Inner {
                x: 3,
                maybe: Some("\u{1}".into()),
            },
            nested: vec![vec![], vec![None, Some(Shape::Newtype(0))]],
        };
        same(&v);
    }

    /// A map keyed by floats (no std map can be).
    struct FloatKeys(Vec<f64>);

    impl Serialize for FloatKeys {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(None)?;
            for (i, k) in self.0.iter().enumerate() {
                m.serialize_entry(k, &i)?;
                m.serialize_entry(&(*k as f32), &i)?;
            }
            m.end()
        }
    }

    #[test]
    fn float_keys_are_quoted_and_must_be_finite_as_in_serde_json() {
        same(&FloatKeys(vec![0.5, -3.0, 1e-9, 123456.75]));
        for bad in [f64::NAN, f64::INFINITY] {
            assert!(serde_json::to_string(&FloatKeys(vec![bad])).is_err());
            assert!(to_vec(&mut Vec::new(), &FloatKeys(vec![bad])).is_err());
        }
    }

    #[test]
    fn keys_that_are_not_strings_are_refused_like_serde_json() {
        let by_seq: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into_iter().collect();
        assert!(serde_json::to_string(&by_seq).is_err());
        assert!(to_vec(&mut Vec::new(), &by_seq).is_err());
    }

    /// The reports of real captures (the lab's, other tools'), worded as
    /// the JSON output words them: byte for byte serde_json's document.
    #[test]
    fn reports_of_real_captures_are_written_as_serde_json_writes_them() {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data");
        let mut files = Vec::new();
        for dir in ["lab", "semantics", "tls-start", "tunnels"] {
            let Ok(entries) = std::fs::read_dir(format!("{data}/{dir}")) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    files.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
                } else {
                    files.push(p);
                }
            }
        }
        files.retain(|p| {
            let name = p.to_string_lossy();
            name.contains(".pcap") || name.ends_with(".cap")
        });
        assert!(files.len() > 20, "test captures missing: {files:?}");
        let mut reports = 0;
        for path in &files {
            let Ok(mut cap) = rttdoc_capture::Capture::open(&path.to_string_lossy()) else {
                continue;
            };
            let options = rttdoc_analyze::AnalyzeOptions {
                series: rttdoc_analyze::SeriesRequest::all(64),
                ..Default::default()
            };
            rttdoc_diagnose::analyze_capture(
                &mut cap,
                options,
                &mut |mut r: rttdoc_model::ConnectionReport| {
                    crate::words::word(&mut r);
                    let (theirs, ours) = both(&r);
                    assert!(ours == theirs, "{}: stream {}", path.display(), r.stream);
                    reports += 1;
                },
            );
        }
        assert!(reports > 50, "only {reports} reports");
    }
}
