//! A minimal pcapng writer: one section, raw-IP interfaces with nanosecond
//! timestamps, enhanced packet blocks. Enough for the lab's captures, which
//! rttdoc and Wireshark both read.

use std::io::{self, Write};

const LINKTYPE_RAW: u16 = 101;

fn block(out: &mut Vec<u8>, kind: u32, mut body: Vec<u8>) {
    while !body.len().is_multiple_of(4) {
        body.push(0);
    }
    let len = (12 + body.len()) as u32;
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&len.to_le_bytes());
}

fn option(body: &mut Vec<u8>, code: u16, value: &[u8]) {
    body.extend_from_slice(&code.to_le_bytes());
    body.extend_from_slice(&(value.len() as u16).to_le_bytes());
    body.extend_from_slice(value);
    while !body.len().is_multiple_of(4) {
        body.push(0);
    }
}

/// Writes a pcapng file with one raw-IP interface per name in `interfaces`
/// and the packets `(interface index, timestamp ns, bytes)` in order.
pub fn write<W: Write>(
    mut out: W,
    interfaces: &[&str],
    packets: &[(u32, i64, &[u8])],
) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    option(
        &mut shb,
        4,
        format!("rttdoc lab {}", env!("CARGO_PKG_VERSION")).as_bytes(),
    );
    option(&mut shb, 0, &[]);
    block(&mut buf, 0x0a0d0d0a, shb);
    for name in interfaces {
        let mut idb = Vec::new();
        idb.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&65535u32.to_le_bytes());
        option(&mut idb, 2, name.as_bytes());
        option(&mut idb, 9, &[9]);
        option(&mut idb, 0, &[]);
        block(&mut buf, 1, idb);
    }
    out.write_all(&buf)?;
    for (iface, ts, data) in packets {
        let ts = *ts as u64;
        let mut epb = Vec::with_capacity(20 + data.len() + 4);
        epb.extend_from_slice(&iface.to_le_bytes());
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(data);
        let mut b = Vec::with_capacity(epb.len() + 16);
        block(&mut b, 6, epb);
        out.write_all(&b)?;
    }
    out.flush()
}
