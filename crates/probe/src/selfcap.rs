//! Self-capture: the probe records its own connection's packets with an
//! AF_PACKET socket, the way tcpdump would, so the same analysis as
//! `rttdoc analyze` can explain them.
//!
//! The interface is deliberately small so that it can later be folded onto
//! the live capture of `rttdoc monitor`: [`start`] with the connection's
//! 4-tuple (known before `connect`, since the probe binds its port first),
//! then [`SelfCapture::finish`] for the packets, as raw IP with the
//! kernel's receive timestamps (nanoseconds, CLOCK_REALTIME).
//!
//! How: one `SOCK_DGRAM` packet socket for every protocol on every
//! interface (the kernel strips the link header, so every packet is plain
//! IPv4/IPv6, whatever the interface: Ethernet, loopback, TUN, WireGuard);
//! a classic BPF program in the kernel keeps only TCP segments with the
//! probe's local port on either side (so nothing else is copied to user
//! space), and the exact 4-tuple is checked here (the BPF cannot see
//! IPv6 addresses cheaply, and packets queued before the filter was
//! attached get through it). On a loopback device every packet passes the
//! tap twice, once leaving and once arriving: the leaving copy is dropped,
//! as libpcap does. Opening the socket needs CAP_NET_RAW; without it
//! [`start`] fails with `PermissionDenied` and the probe falls back to
//! TCP_INFO.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// `SO_TIMESTAMPNS` (and `SCM_TIMESTAMPNS`) in the generic, x86 and arm
/// socket ABI (asm-generic/socket.h: `SO_TIMESTAMPNS_OLD`).
const SO_TIMESTAMPNS: libc::c_int = 35;
/// `sll_pkttype` of a packet this host sends (linux/if_packet.h).
const PACKET_OUTGOING: u8 = 4;
/// `getsockopt(SOL_PACKET, PACKET_STATISTICS)`: packets seen and dropped.
const PACKET_STATISTICS: libc::c_int = 6;
/// Largest packet kept: a GRO/TSO super-segment is at most 64 KB plus
/// headers; Wireshark's limit is 262,144.
const SNAPLEN: usize = 262_144;

/// The probe's own connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// The probe's port; its address may be unspecified (0.0.0.0 or ::)
    /// when the kernel picks it only at `connect`.
    pub local: SocketAddr,
    pub remote: SocketAddr,
}

/// One captured packet: raw IP (LINKTYPE_RAW), kernel timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    pub ts_ns: i64,
    pub data: Vec<u8>,
}

/// What a capture got.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub packets: Vec<Packet>,
    /// Packets the kernel dropped because the socket's buffer was full
    /// (PACKET_STATISTICS): the capture is missing those.
    pub kernel_drops: u32,
    /// Packets past [`MAX_KEPT_BYTES`], seen but not kept.
    pub not_kept: u64,
}

/// Most bytes one capture keeps: a big download would otherwise hold all
/// of itself in memory; what comes later is counted, not kept (the
/// handshakes and first bytes the analysis is about come first).
pub const MAX_KEPT_BYTES: usize = 128 << 20;

/// The packets kept, and how many more were seen past the budget.
type Kept = (Vec<Packet>, u64);

/// A running capture of one flow.
pub struct SelfCapture {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<Kept>>>,
    fd: Arc<OwnedFd>,
}

/// A classic BPF instruction (`struct sock_filter`).
#[derive(Clone, Copy)]
#[repr(C)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

const LDB_ABS: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
const LDH_ABS: u16 = 0x28; // BPF_LD | BPF_H | BPF_ABS
const LDH_IND: u16 = 0x48; // BPF_LD | BPF_H | BPF_IND
const LDXB_MSH: u16 = 0xb1; // BPF_LDX | BPF_B | BPF_MSH: X = 4 * (P[k] & 0xf)
const RSH_K: u16 = 0x74; // BPF_ALU | BPF_RSH | BPF_K
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

/// The kernel-side filter: TCP (IPv4 without fragment offset, or IPv6 with
/// TCP as the first next header) whose source or destination port is
/// `port`. Offsets are from the IP header (SOCK_DGRAM packet sockets
/// strip the link layer).
fn port_filter(port: u16) -> Vec<Insn> {
    const ACC: usize = 19;
    const REJ: usize = 20;
    let p = port as u32;
    // (code, k, jump-if-true target, jump-if-false target) by index.
    let prog: [(u16, u32, usize, usize); 21] = [
        (LDB_ABS, 0, 0, 0),            // 0: A = version/IHL
        (RSH_K, 4, 0, 0),              // 1: A = version
        (JEQ_K, 4, 3, 12),             // 2: IPv4?
        (LDB_ABS, 9, 0, 0),            // 3: protocol
        (JEQ_K, 6, 5, REJ),            // 4: TCP?
        (LDH_ABS, 6, 0, 0),            // 5: flags + fragment offset
        (JSET_K, 0x1fff, REJ, 7),      // 6: a later fragment has no TCP header
        (LDXB_MSH, 0, 0, 0),           // 7: X = IP header length
        (LDH_IND, 0, 0, 0),            // 8: source port
        (JEQ_K, p, ACC, 10),           // 9
        (LDH_IND, 2, 0, 0),            // 10: destination port
        (JEQ_K, p, ACC, REJ),          // 11
        (JEQ_K, 6, 13, REJ),           // 12: IPv6?
        (LDB_ABS, 6, 0, 0),            // 13: next header
        (JEQ_K, 6, 15, REJ),           // 14: TCP?
        (LDH_ABS, 40, 0, 0),           // 15: source port
        (JEQ_K, p, ACC, 17),           // 16
        (LDH_ABS, 42, 0, 0),           // 17: destination port
        (JEQ_K, p, ACC, REJ),          // 18
        (RET_K, SNAPLEN as u32, 0, 0), // 19: keep the packet
        (RET_K, 0, 0, 0),              // 20: drop it
    ];
    prog.iter()
        .enumerate()
        .map(|(i, &(code, k, t, f))| {
            let is_cond = code == JEQ_K || code == JSET_K;
            Insn {
                code,
                jt: if is_cond { (t - i - 1) as u8 } else { 0 },
                jf: if is_cond { (f - i - 1) as u8 } else { 0 },
                k,
            }
        })
        .collect()
}

fn check(rc: libc::c_int, what: &str) -> io::Result<()> {
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

fn setsockopt<T>(fd: libc::c_int, level: libc::c_int, name: libc::c_int, v: &T) -> libc::c_int {
    // SAFETY: `v` points to a live T of the given size.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    }
}

/// Turns the kernel's receive timestamps on for the whole process's life.
/// The kernel stamps arriving packets only while some socket asks for
/// timestamps, and it switches that on through deferred work: packets of
/// the first moments would otherwise be stamped when this process reads
/// them (late, and out of order with later ones). A UDP socket with
/// SO_TIMESTAMPNS held open, and one short wait the first time, keeps
/// every capture's stamps at arrival. Call it before timing anything
/// ([`start`] calls it too).
pub fn keep_timestamps_on() {
    static HOLDER: std::sync::OnceLock<Option<OwnedFd>> = std::sync::OnceLock::new();
    HOLDER.get_or_init(|| {
        // SAFETY: plain socket(2).
        let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return None;
        }
        // SAFETY: a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let one: libc::c_int = 1;
        setsockopt(raw, libc::SOL_SOCKET, SO_TIMESTAMPNS, &one);
        std::thread::sleep(std::time::Duration::from_millis(20));
        Some(fd)
    });
}

/// Starts capturing `flow`'s packets. Fails with
/// [`io::ErrorKind::PermissionDenied`] without CAP_NET_RAW.
pub fn start(flow: Flow) -> io::Result<SelfCapture> {
    // SAFETY: plain socket(2).
    let raw = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            (libc::ETH_P_ALL as u16).to_be() as libc::c_int,
        )
    };
    check(raw, "AF_PACKET socket")?;
    // SAFETY: `raw` is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let filter = port_filter(flow.local.port());
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    check(
        setsockopt(raw, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog),
        "SO_ATTACH_FILTER",
    )?;
    let one: libc::c_int = 1;
    check(
        setsockopt(raw, libc::SOL_SOCKET, SO_TIMESTAMPNS, &one),
        "SO_TIMESTAMPNS",
    )?;
    keep_timestamps_on();
    // A big receive buffer: a fast download must not overrun it while the
    // thread sleeps. FORCE needs CAP_NET_ADMIN; the plain one is capped
    // by net.core.rmem_max.
    let buf: libc::c_int = 8 << 20;
    if setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &buf) < 0 {
        setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &buf);
    }
    // Wake up every 20 ms to look at the stop flag.
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 20_000,
    };
    check(
        setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv),
        "SO_RCVTIMEO",
    )?;
    let fd = Arc::new(fd);
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let (fd, stop) = (fd.clone(), stop.clone());
        std::thread::Builder::new()
            .name("rttdoc-selfcap".into())
            .spawn(move || read_loop(fd.as_raw_fd(), flow, &stop))?
    };
    Ok(SelfCapture {
        stop,
        thread: Some(thread),
        fd,
    })
}

impl SelfCapture {
    /// Stops the capture after reading everything already queued, and
    /// returns the flow's packets in arrival order.
    pub fn finish(mut self) -> io::Result<Captured> {
        self.stop.store(true, Ordering::SeqCst);
        let (packets, not_kept) = match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r?,
            Some(Err(_)) => return Err(io::Error::other("capture thread panicked")),
            None => (Vec::new(), 0),
        };
        let mut stats = [0u32; 2];
        let mut len = std::mem::size_of_val(&stats) as libc::socklen_t;
        // SAFETY: tpacket_stats is two u32 (packets, drops).
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                stats.as_mut_ptr() as *mut libc::c_void,
                &mut len,
            )
        };
        Ok(Captured {
            packets,
            kernel_drops: if rc == 0 { stats[1] } else { 0 },
            not_kept,
        })
    }
}

impl Drop for SelfCapture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn read_loop(fd: libc::c_int, flow: Flow, stop: &AtomicBool) -> io::Result<Kept> {
    let mut packets = Vec::new();
    let (mut kept, mut not_kept) = (0usize, 0u64);
    let mut buf = vec![0u8; SNAPLEN];
    let mut control = [0u64; 16];
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: msghdr is plain data; every pointer in it is set below
        // to a live buffer of the stated length.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = &mut from as *mut _ as *mut libc::c_void;
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // Once asked to stop, drain what is queued without waiting.
        let flags = if stopping { libc::MSG_DONTWAIT } else { 0 };
        // SAFETY: see above.
        let n = unsafe { libc::recvmsg(fd, &mut msg, flags | libc::MSG_TRUNC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut if stopping => break,
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => continue,
                io::ErrorKind::Interrupted => continue,
                _ => return Err(e),
            }
        }
        let len = (n as usize).min(buf.len());
        if from.sll_pkttype == PACKET_OUTGOING && from.sll_hatype == libc::ARPHRD_LOOPBACK {
            continue;
        }
        if !belongs(&buf[..len], &flow) {
            continue;
        }
        if kept + len > MAX_KEPT_BYTES {
            not_kept += 1;
            continue;
        }
        kept += len;
        packets.push(Packet {
            ts_ns: timestamp(&msg).unwrap_or_else(now_ns),
            data: buf[..len].to_vec(),
        });
    }
    Ok((packets, not_kept))
}

/// The kernel's receive timestamp from the SCM_TIMESTAMPNS message.
fn timestamp(msg: &libc::msghdr) -> Option<i64> {
    // SAFETY: CMSG_* walk the control buffer the kernel filled, within
    // msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return Some(ts.tv_sec * 1_000_000_000 + ts.tv_nsec);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// The addresses and ports of a raw IP packet carrying TCP.
pub fn tcp_endpoints(ip: &[u8]) -> Option<(SocketAddr, SocketAddr)> {
    let version = ip.first()? >> 4;
    let (src, dst, tcp) = match version {
        4 => {
            let ihl = (ip[0] & 0x0f) as usize * 4;
            if ip.len() < ihl + 4 || ihl < 20 || ip[9] != 6 {
                return None;
            }
            let a: [u8; 4] = ip[12..16].try_into().ok()?;
            let b: [u8; 4] = ip[16..20].try_into().ok()?;
            (IpAddr::from(a), IpAddr::from(b), &ip[ihl..])
        }
        6 => {
            if ip.len() < 44 || ip[6] != 6 {
                return None;
            }
            let a: [u8; 16] = ip[8..24].try_into().ok()?;
            let b: [u8; 16] = ip[24..40].try_into().ok()?;
            (IpAddr::from(a), IpAddr::from(b), &ip[40..])
        }
        _ => return None,
    };
    let sport = u16::from_be_bytes([tcp[0], tcp[1]]);
    let dport = u16::from_be_bytes([tcp[2], tcp[3]]);
    Some((SocketAddr::new(src, sport), SocketAddr::new(dst, dport)))
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(a: SocketAddr) -> SocketAddr {
    match a.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), a.port()),
            None => a,
        },
        IpAddr::V4(_) => a,
    }
}

/// Whether the packet is one of the flow's, either way.
pub fn belongs(ip: &[u8], flow: &Flow) -> bool {
    let Some((src, dst)) = tcp_endpoints(ip) else {
        return false;
    };
    let (l, r) = (canonical(flow.local), canonical(flow.remote));
    let is_local =
        |a: SocketAddr| a.port() == l.port() && (l.ip().is_unspecified() || a.ip() == l.ip());
    (is_local(src) && dst == r) || (src == r && is_local(dst))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4_tcp(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[9] = 6;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    }

    /// Runs the classic BPF program on a packet (the subset it uses), as
    /// the kernel would, so the filter's jumps are checked without root.
    fn run_bpf(prog: &[Insn], p: &[u8]) -> u32 {
        let (mut a, mut x, mut pc) = (0u32, 0u32, 0usize);
        let byte = |i: usize| p.get(i).copied();
        let half = |i: usize| Some(u16::from_be_bytes([byte(i)?, byte(i + 1)?]) as u32);
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                LDB_ABS => match byte(i.k as usize) {
                    Some(v) => a = v as u32,
                    None => return 0,
                },
                LDH_ABS => match half(i.k as usize) {
                    Some(v) => a = v,
                    None => return 0,
                },
                LDH_IND => match half((x + i.k) as usize) {
                    Some(v) => a = v,
                    None => return 0,
                },
                LDXB_MSH => match byte(i.k as usize) {
                    Some(v) => x = 4 * (v as u32 & 0xf),
                    None => return 0,
                },
                RSH_K => a >>= i.k,
                JEQ_K => pc += if a == i.k { i.jt } else { i.jf } as usize,
                JSET_K => pc += if a & i.k != 0 { i.jt } else { i.jf } as usize,
                RET_K => return i.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    #[test]
    fn kernel_filter_keeps_tcp_on_the_probe_port_either_way_and_nothing_else() {
        let prog = port_filter(40000);
        let out = v4_tcp([10, 0, 0, 1], 40000, [10, 0, 0, 2], 443);
        let back = v4_tcp([10, 0, 0, 2], 443, [10, 0, 0, 1], 40000);
        let other = v4_tcp([10, 0, 0, 1], 40001, [10, 0, 0, 2], 443);
        assert!(run_bpf(&prog, &out) > 0);
        assert!(run_bpf(&prog, &back) > 0);
        assert_eq!(run_bpf(&prog, &other), 0);
        let mut udp = out.clone();
        udp[9] = 17;
        assert_eq!(run_bpf(&prog, &udp), 0);
        let mut fragment = out.clone();
        fragment[6] = 0x00;
        fragment[7] = 0x10;
        assert_eq!(run_bpf(&prog, &fragment), 0, "a later fragment");
        let mut options = vec![0u8; 44];
        options[0] = 0x46; // 24-byte header
        options[9] = 6;
        options[24..26].copy_from_slice(&443u16.to_be_bytes());
        options[26..28].copy_from_slice(&40000u16.to_be_bytes());
        assert!(run_bpf(&prog, &options) > 0, "IP options shift the ports");
        let mut v6 = vec![0u8; 60];
        v6[0] = 0x60;
        v6[6] = 6;
        v6[40..42].copy_from_slice(&443u16.to_be_bytes());
        v6[42..44].copy_from_slice(&40000u16.to_be_bytes());
        assert!(run_bpf(&prog, &v6) > 0);
        v6[6] = 17;
        assert_eq!(run_bpf(&prog, &v6), 0);
    }

    #[test]
    fn flow_match_needs_the_whole_four_tuple_and_accepts_mapped_addresses() {
        let flow = Flow {
            local: "10.0.0.1:40000".parse().unwrap(),
            remote: "[::ffff:10.0.0.2]:443".parse().unwrap(),
        };
        assert!(belongs(
            &v4_tcp([10, 0, 0, 1], 40000, [10, 0, 0, 2], 443),
            &flow
        ));
        assert!(belongs(
            &v4_tcp([10, 0, 0, 2], 443, [10, 0, 0, 1], 40000),
            &flow
        ));
        assert!(!belongs(
            &v4_tcp([10, 0, 0, 3], 443, [10, 0, 0, 1], 40000),
            &flow
        ));
        assert!(!belongs(
            &v4_tcp([10, 0, 0, 2], 80, [10, 0, 0, 1], 40000),
            &flow
        ));
        assert!(!belongs(&[0x45, 0, 0], &flow), "a cut packet");
        let any = Flow {
            local: "0.0.0.0:40000".parse().unwrap(),
            ..flow
        };
        assert!(belongs(
            &v4_tcp([10, 0, 0, 9], 40000, [10, 0, 0, 2], 443),
            &any
        ));
        assert!(!belongs(
            &v4_tcp([10, 0, 0, 9], 40001, [10, 0, 0, 2], 443),
            &any
        ));
    }
}
