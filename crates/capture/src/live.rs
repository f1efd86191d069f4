//! Live capture from a network interface (Linux), yielding the same
//! [`Frame`]s as a capture file.
//!
//! A `PF_PACKET` socket with a `TPACKET_V3` receive ring: the kernel writes
//! packets, with nanosecond timestamps, into blocks of a memory-mapped ring
//! and hands a block over when it is full or 10 ms old, so a busy link
//! costs one `poll` per block instead of one system call per packet.
//! `PACKET_STATISTICS` counts what the ring had no room for ([`LiveStats`]).
//!
//! - An Ethernet interface (or `lo`) is read with its link-layer headers
//!   ([`crate::linktype::ETHERNET`]); any other kind (TUN, PPP, tunnels),
//!   and `any` (every interface, socket bound to ifindex 0), is read
//!   "cooked": the kernel strips the link header and the frame gets the
//!   16-byte Linux cooked header ([`crate::linktype::LINUX_SLL`]) that
//!   libpcap writes, built from the packet's `sockaddr_ll`.
//! - On the loopback device every packet passes twice (once sent, once
//!   received); the sent copy is skipped, as libpcap does.
//! - `--filter` expressions are compiled by libpcap, loaded at run time
//!   (`dlopen` of libpcap.so.0.8 or libpcap.so, present wherever tcpdump or
//!   tshark is), so building rttdoc needs no libpcap headers. The program
//!   runs in the kernel (`SO_ATTACH_FILTER`); for a cooked socket its
//!   loads from the cooked header are rewritten to the kernel's ancillary
//!   loads as libpcap does, and a program that reads other cooked-header
//!   bytes runs in user space instead (libpcap's `pcap_offline_filter`).
//!
//! Needs `CAP_NET_RAW` (root, or the capability on the binary or unit).

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use crate::linktype;
use crate::reader::Frame;

/// Why a live capture could not start.
#[derive(Debug)]
pub enum LiveError {
    /// The interface does not exist.
    NoSuchInterface(String),
    /// A socket call failed; `what` names it (permission errors say which
    /// capability is missing).
    Os { what: String, error: io::Error },
    /// libpcap, needed only to compile a filter, could not be loaded.
    NoLibpcap(String),
    /// libpcap refused the filter expression.
    Filter { expression: String, message: String },
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LiveError::NoSuchInterface(name) => write!(
                f,
                "no network interface {name:?} (`ip link` lists them; `any` captures on all)"
            ),
            LiveError::Os { what, error } => {
                write!(f, "{what}: {error}")?;
                if matches!(error.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) {
                    write!(
                        f,
                        " (live capture needs CAP_NET_RAW: run as root, \
                         `setcap cap_net_raw+ep` the binary, or use the systemd unit's \
                         AmbientCapabilities=CAP_NET_RAW)"
                    )?;
                }
                Ok(())
            }
            LiveError::NoLibpcap(why) => write!(
                f,
                "--filter needs libpcap at run time to compile the expression, and it could \
                 not be loaded ({why}); install it (Debian/Ubuntu: apt-get install libpcap0.8, \
                 which tcpdump and tshark bring) or capture without --filter"
            ),
            LiveError::Filter {
                expression,
                message,
            } => write!(f, "filter {expression:?}: {message}"),
        }
    }
}

impl std::error::Error for LiveError {}

/// Packets the kernel handed to the socket and those it dropped because
/// the ring was full (the reader fell behind), since the capture opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Packets that passed the filter (dropped ones included), as libpcap's
    /// `ps_recv`.
    pub received: u64,
    /// Packets lost for want of room in the ring (`ps_drop`).
    pub dropped: u64,
}

/// Ring geometry: 1 MiB blocks, [`DEFAULT_BUFFER_BYTES`] of them by default
/// (32 MiB: about 0.25 s of a saturated 1 Gbit/s link, or seconds of
/// typical traffic, before the reader must catch up).
const BLOCK_SIZE: usize = 1 << 20;

/// The ring size [`LiveCapture::open`] asks for.
pub const DEFAULT_BUFFER_BYTES: usize = 32 << 20;
/// Nominal frame slot for the ring request (TPACKET_V3 packs packets of any
/// size into blocks; the kernel only checks the arithmetic).
const FRAME_SIZE: usize = 2048;
/// A block is handed over at the latest this long after its first packet,
/// so a quiet link still delivers within milliseconds.
const BLOCK_TIMEOUT_MS: u32 = 10;

const TPACKET_V3: c_int = 2;
const PACKET_RX_RING: c_int = 5;
const PACKET_STATISTICS: c_int = 6;
const PACKET_VERSION: c_int = 10;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const PACKET_OUTGOING: u8 = 4;
const ARPHRD_ETHER: u16 = 1;
const ARPHRD_LOOPBACK: u16 = 772;
const SLL_HDR_LEN: usize = 16;

#[repr(C)]
struct TpacketReq3 {
    tp_block_size: c_uint,
    tp_block_nr: c_uint,
    tp_frame_size: c_uint,
    tp_frame_nr: c_uint,
    tp_retire_blk_tov: c_uint,
    tp_sizeof_priv: c_uint,
    tp_feature_req_word: c_uint,
}

#[repr(C)]
struct TpacketStatsV3 {
    tp_packets: c_uint,
    tp_drops: c_uint,
    tp_freeze_q_cnt: c_uint,
}

/// `struct tpacket_block_desc` with its `tpacket_hdr_v1`.
#[repr(C)]
struct BlockDesc {
    version: u32,
    offset_to_priv: u32,
    block_status: u32,
    num_pkts: u32,
    offset_to_first_pkt: u32,
    blk_len: u32,
    seq_num: u64,
    ts_first: [u32; 2],
    ts_last: [u32; 2],
}

/// `struct tpacket3_hdr`.
#[repr(C)]
struct Tpacket3Hdr {
    tp_next_offset: u32,
    tp_sec: u32,
    tp_nsec: u32,
    tp_snaplen: u32,
    tp_len: u32,
    tp_status: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_rxhash: u32,
    tp_vlan_tci: u32,
    tp_vlan_tpid: u16,
    tp_padding: u16,
    tp_padding2: [u8; 8],
}

/// `TPACKET_ALIGN(sizeof(struct tpacket3_hdr))`: where the packet's
/// `sockaddr_ll` starts.
const TPACKET3_HDRLEN: usize = (std::mem::size_of::<Tpacket3Hdr>() + 15) & !15;

/// A live capture on one interface (or `any`).
pub struct LiveCapture {
    fd: OwnedFd,
    ring: *mut u8,
    ring_len: usize,
    block_count: usize,
    /// The block being read, and where in it.
    block: usize,
    in_block: bool,
    pkts_left: u32,
    next_pkt: usize,
    link_type: u32,
    cooked: bool,
    loopback_ifindex: Option<i32>,
    /// A filter the kernel could not run (cooked-header fields), run here.
    user_filter: Option<UserFilter>,
    /// Where a cooked frame (header + packet) is assembled.
    scratch: Vec<u8>,
    number: u64,
    stats: LiveStats,
    interface: String,
    /// Bytes kept of each packet (of the cooked frame, header included).
    snaplen: usize,
}

// SAFETY: the ring is owned by this value alone (mapped in `open`, unmapped
// in Drop) and only touched through &mut self.
unsafe impl Send for LiveCapture {}

fn os(what: impl Into<String>) -> impl FnOnce(io::Error) -> LiveError {
    let what = what.into();
    move |error| LiveError::Os { what, error }
}

fn check(ret: c_int) -> io::Result<c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// The interface's index and hardware type (`ARPHRD_*`).
fn interface_info(name: &str) -> Result<(i32, u16), LiveError> {
    let cname = CString::new(name).map_err(|_| LiveError::NoSuchInterface(name.into()))?;
    // SAFETY: if_nametoindex reads a NUL-terminated string.
    let index = unsafe { libc::if_nametoindex(cname.as_ptr()) };
    if index == 0 {
        return Err(LiveError::NoSuchInterface(name.into()));
    }
    let hatype = std::fs::read_to_string(format!("/sys/class/net/{name}/type"))
        .ok()
        .and_then(|t| t.trim().parse::<u16>().ok())
        .unwrap_or(0);
    Ok((index as i32, hatype))
}

impl LiveCapture {
    /// Opens `interface` (`any` for all), keeping at most `snaplen` bytes
    /// of each packet, with an optional BPF filter expression (tcpdump's
    /// syntax), and a ring of [`DEFAULT_BUFFER_BYTES`]. Frames are numbered
    /// from 1.
    pub fn open(
        interface: &str,
        filter: Option<&str>,
        snaplen: u32,
    ) -> Result<LiveCapture, LiveError> {
        Self::open_with_buffer(interface, filter, snaplen, DEFAULT_BUFFER_BYTES)
    }

    /// [`LiveCapture::open`] with a ring of `buffer_bytes` (rounded up to
    /// whole 1 MiB blocks, at least 2): what the kernel can hold while the
    /// reader is busy (tcpdump's `-B`).
    pub fn open_with_buffer(
        interface: &str,
        filter: Option<&str>,
        snaplen: u32,
        buffer_bytes: usize,
    ) -> Result<LiveCapture, LiveError> {
        let block_count = buffer_bytes.div_ceil(BLOCK_SIZE).max(2);
        let any = interface == "any";
        let (ifindex, hatype) = if any {
            (0, 0)
        } else {
            interface_info(interface)?
        };
        let loopback_ifindex = if any {
            interface_info("lo").ok().map(|(i, _)| i)
        } else {
            (hatype == ARPHRD_LOOPBACK).then_some(ifindex)
        };
        // Ethernet headers are kept as they are; anything else gets the
        // cooked header, whose protocol field tells IPv4 from IPv6.
        let cooked = any || !(hatype == ARPHRD_ETHER || hatype == ARPHRD_LOOPBACK);
        let link_type = if cooked {
            linktype::LINUX_SLL
        } else {
            linktype::ETHERNET
        };
        let sock_type = if cooked {
            libc::SOCK_DGRAM
        } else {
            libc::SOCK_RAW
        };
        // Protocol 0: nothing arrives until bind, so no packet slips in
        // before the filter is attached.
        // SAFETY: plain socket call.
        let fd = check(unsafe { libc::socket(libc::AF_PACKET, sock_type | libc::SOCK_CLOEXEC, 0) })
            .map_err(os("socket(AF_PACKET)"))?;
        // SAFETY: fd is a new descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        setsockopt(raw, libc::SOL_PACKET, PACKET_VERSION, &TPACKET_V3)
            .map_err(os("PACKET_VERSION TPACKET_V3"))?;
        let req = TpacketReq3 {
            tp_block_size: BLOCK_SIZE as c_uint,
            tp_block_nr: block_count as c_uint,
            tp_frame_size: FRAME_SIZE as c_uint,
            tp_frame_nr: (BLOCK_SIZE / FRAME_SIZE * block_count) as c_uint,
            tp_retire_blk_tov: BLOCK_TIMEOUT_MS,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setsockopt(raw, libc::SOL_PACKET, PACKET_RX_RING, &req).map_err(os("PACKET_RX_RING"))?;
        let ring_len = BLOCK_SIZE * block_count;
        // SAFETY: maps the ring the kernel just allocated for this socket.
        let ring = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ring_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED,
                raw,
                0,
            )
        };
        // MAP_LOCKED fails under a small RLIMIT_MEMLOCK: map it unlocked.
        let ring = if ring == libc::MAP_FAILED {
            // SAFETY: as above.
            unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    ring_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    raw,
                    0,
                )
            }
        } else {
            ring
        };
        if ring == libc::MAP_FAILED {
            return Err(os("mmap of the packet ring")(io::Error::last_os_error()));
        }
        let mut capture = LiveCapture {
            fd,
            ring: ring as *mut u8,
            ring_len,
            block_count,
            block: 0,
            in_block: false,
            pkts_left: 0,
            next_pkt: 0,
            link_type,
            cooked,
            loopback_ifindex,
            user_filter: None,
            scratch: Vec::with_capacity(SLL_HDR_LEN + 65536),
            number: 0,
            stats: LiveStats::default(),
            interface: interface.to_string(),
            snaplen: snaplen.max(1) as usize,
        };
        if let Some(expression) = filter {
            capture.attach_filter(expression, snaplen)?;
        }
        let sll = libc::sockaddr_ll {
            sll_family: libc::AF_PACKET as u16,
            sll_protocol: (libc::ETH_P_ALL as u16).to_be(),
            sll_ifindex: ifindex,
            sll_hatype: 0,
            sll_pkttype: 0,
            sll_halen: 0,
            sll_addr: [0; 8],
        };
        // SAFETY: binds to a sockaddr_ll of the right size.
        check(unsafe {
            libc::bind(
                raw,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })
        .map_err(os(format!("bind to {interface}")))?;
        Ok(capture)
    }

    /// The link-layer type of the frames this capture yields.
    pub fn link_type(&self) -> u32 {
        self.link_type
    }

    /// The interface given to [`LiveCapture::open`].
    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// Received and dropped packets so far (the kernel's counters, read
    /// and reset by each call, are added up here).
    pub fn stats(&mut self) -> io::Result<LiveStats> {
        let mut st = TpacketStatsV3 {
            tp_packets: 0,
            tp_drops: 0,
            tp_freeze_q_cnt: 0,
        };
        let mut len = std::mem::size_of::<TpacketStatsV3>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into `st`.
        check(unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                &mut st as *mut TpacketStatsV3 as *mut c_void,
                &mut len,
            )
        })?;
        // The kernel's tp_packets already includes the drops.
        self.stats.received += st.tp_packets as u64;
        self.stats.dropped += st.tp_drops as u64;
        Ok(self.stats)
    }

    fn block_desc(&self, block: usize) -> *mut BlockDesc {
        // SAFETY: block < block_count, inside the mapping.
        unsafe { self.ring.add(block * BLOCK_SIZE) as *mut BlockDesc }
    }

    /// Gives the current block back to the kernel and moves to the next.
    fn release_block(&mut self) {
        let desc = self.block_desc(self.block);
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        // SAFETY: the block is ours (status USER) until this store.
        unsafe { std::ptr::write_volatile(&mut (*desc).block_status, TP_STATUS_KERNEL) };
        self.block = (self.block + 1) % self.block_count;
        self.in_block = false;
    }

    /// The next frame, waiting at most `timeout` for one; `Ok(None)` when
    /// none came in time (the caller's chance to do timed work).
    pub fn next_frame(&mut self, timeout: Duration) -> io::Result<Option<Frame<'_>>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self.in_block && self.pkts_left == 0 {
                self.release_block();
            }
            if !self.in_block {
                let desc = self.block_desc(self.block);
                // SAFETY: the status word is shared with the kernel.
                let status = unsafe { std::ptr::read_volatile(&(*desc).block_status) };
                if status & TP_STATUS_USER == 0 {
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        return Ok(None);
                    }
                    let mut pfd = libc::pollfd {
                        fd: self.fd.as_raw_fd(),
                        events: libc::POLLIN | libc::POLLERR,
                        revents: 0,
                    };
                    let ms = left.as_millis().clamp(1, i32::MAX as u128) as c_int;
                    // SAFETY: one pollfd.
                    let r = unsafe { libc::poll(&mut pfd, 1, ms) };
                    if r < 0 {
                        let e = io::Error::last_os_error();
                        if e.kind() != io::ErrorKind::Interrupted {
                            return Err(e);
                        }
                    }
                    continue;
                }
                std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
                // SAFETY: the kernel handed this block over.
                let (n, first) = unsafe { ((*desc).num_pkts, (*desc).offset_to_first_pkt) };
                self.in_block = true;
                self.pkts_left = n;
                self.next_pkt = first as usize;
                continue;
            }
            // One packet of the current block.
            let base = self.block * BLOCK_SIZE;
            let off = base + self.next_pkt;
            if self.next_pkt + TPACKET3_HDRLEN + std::mem::size_of::<libc::sockaddr_ll>()
                > BLOCK_SIZE
            {
                // A corrupt offset would read past the block: drop the rest.
                self.pkts_left = 0;
                continue;
            }
            // SAFETY: off is inside this block (checked above).
            let hdr = unsafe { &*(self.ring.add(off) as *const Tpacket3Hdr) };
            // SAFETY: the sockaddr_ll follows the aligned header.
            let sll = unsafe {
                std::ptr::read_unaligned(
                    self.ring.add(off + TPACKET3_HDRLEN) as *const libc::sockaddr_ll
                )
            };
            let (mac, snap, len) = (hdr.tp_mac as usize, hdr.tp_snaplen as usize, hdr.tp_len);
            let ts_ns = hdr.tp_sec as i64 * 1_000_000_000 + hdr.tp_nsec as i64;
            self.pkts_left -= 1;
            if hdr.tp_next_offset != 0 {
                self.next_pkt += hdr.tp_next_offset as usize;
            } else {
                self.pkts_left = 0;
            }
            if mac + snap > BLOCK_SIZE - (off - base) {
                continue;
            }
            if self.loopback_ifindex == Some(sll.sll_ifindex) && sll.sll_pkttype == PACKET_OUTGOING
            {
                continue;
            }
            let at = off + mac;
            // The snapshot length counts the frame as yielded (a cooked
            // header included), as in libpcap.
            let snap = snap.min(if self.cooked {
                self.snaplen.saturating_sub(SLL_HDR_LEN)
            } else {
                self.snaplen
            });
            let orig_len = if self.cooked {
                self.scratch.clear();
                self.scratch.extend_from_slice(&cooked_header(&sll));
                // SAFETY: at + snap lies inside the block (checked above).
                self.scratch.extend_from_slice(unsafe {
                    std::slice::from_raw_parts(self.ring.add(at), snap)
                });
                len + SLL_HDR_LEN as u32
            } else {
                len
            };
            if let Some(f) = &self.user_filter {
                let data: &[u8] = if self.cooked {
                    &self.scratch
                } else {
                    // SAFETY: as above.
                    unsafe { std::slice::from_raw_parts(self.ring.add(at), snap) }
                };
                if !f.matches(data, orig_len, ts_ns) {
                    continue;
                }
            }
            self.number += 1;
            let data: &[u8] = if self.cooked {
                &self.scratch
            } else {
                // SAFETY: as above; the block stays ours until the next call.
                unsafe { std::slice::from_raw_parts(self.ring.add(at), snap) }
            };
            return Ok(Some(Frame {
                number: self.number,
                ts_ns,
                link_type: self.link_type,
                orig_len,
                data,
                time_out_of_range: false,
            }));
        }
    }

    fn attach_filter(&mut self, expression: &str, snaplen: u32) -> Result<(), LiveError> {
        let lib = Libpcap::load()?;
        let mut program = lib.compile(expression, self.link_type, snaplen)?;
        let mut insns: Vec<libc::sock_filter> = program.instructions().to_vec();
        let kernel_ok = !self.cooked || fix_cooked_program(&mut insns);
        if kernel_ok {
            let fprog = libc::sock_fprog {
                len: insns.len() as u16,
                filter: insns.as_mut_ptr(),
            };
            setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ATTACH_FILTER,
                &fprog,
            )
            .map_err(os("SO_ATTACH_FILTER"))?;
            program.free(&lib);
        } else {
            self.user_filter = Some(UserFilter { lib, program });
        }
        Ok(())
    }
}

impl Drop for LiveCapture {
    fn drop(&mut self) {
        // SAFETY: unmaps the ring mapped in `open`; the socket closes after.
        unsafe { libc::munmap(self.ring as *mut c_void, self.ring_len) };
    }
}

fn setsockopt<T>(fd: c_int, level: c_int, name: c_int, value: &T) -> io::Result<()> {
    // SAFETY: passes a valid pointer to a T and its size.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value as *const T as *const c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// libpcap's 16-byte `LINUX_SLL` header for a packet the kernel gave
/// without its link header: packet type, ARPHRD type, address length,
/// 8 address bytes, protocol (all big-endian but the address).
fn cooked_header(sll: &libc::sockaddr_ll) -> [u8; SLL_HDR_LEN] {
    let mut h = [0u8; SLL_HDR_LEN];
    h[0..2].copy_from_slice(&(sll.sll_pkttype as u16).to_be_bytes());
    h[2..4].copy_from_slice(&sll.sll_hatype.to_be_bytes());
    let halen = (sll.sll_halen as usize).min(8);
    h[4..6].copy_from_slice(&(halen as u16).to_be_bytes());
    h[6..6 + halen].copy_from_slice(&sll.sll_addr[..halen]);
    // sll_protocol is already in network order.
    h[14..16].copy_from_slice(&sll.sll_protocol.to_ne_bytes());
    h
}

const BPF_LD: u16 = 0x00;
const BPF_LDX: u16 = 0x01;
const BPF_RET: u16 = 0x06;
const BPF_ABS: u16 = 0x20;
const BPF_IND: u16 = 0x40;
const BPF_MSH: u16 = 0xa0;
const SKF_AD_OFF: i32 = -0x1000;
const SKF_AD_PROTOCOL: i32 = 0;
const SKF_AD_PKTTYPE: i32 = 4;

/// Rewrites a program compiled for `LINUX_SLL` to run on a cooked socket,
/// where the kernel's packet starts at the network header: loads (absolute,
/// indexed, and the IP header length's) past the cooked header move back by its length, its packet-type and
/// protocol fields become the kernel's ancillary loads, and the snapshot
/// length a match returns is no longer the cooked frame's. False when the
/// program reads another cooked-header field, which the kernel cannot
/// give (libpcap's `fix_program` then filters in user space too).
fn fix_cooked_program(insns: &mut [libc::sock_filter]) -> bool {
    for i in insns.iter_mut() {
        let class = i.code & 0x07;
        let mode = i.code & 0xe0;
        if (class == BPF_LD || class == BPF_LDX) && matches!(mode, BPF_ABS | BPF_IND | BPF_MSH) {
            let k = i.k as i32;
            if k < 0 {
                continue; // already an ancillary load
            }
            let k = k as usize;
            if k >= SLL_HDR_LEN {
                i.k = (k - SLL_HDR_LEN) as u32;
            } else if k == 0 {
                i.k = (SKF_AD_OFF + SKF_AD_PKTTYPE) as u32;
            } else if k == 14 {
                i.k = (SKF_AD_OFF + SKF_AD_PROTOCOL) as u32;
            } else {
                return false;
            }
        } else if class == BPF_RET && i.code & 0x18 == 0 && i.k != 0 {
            // `ret #snaplen`: keep the whole packet (the ring bounds it).
            i.k = u32::MAX >> 1;
        }
    }
    true
}

/// `struct bpf_program`.
#[repr(C)]
struct BpfProgram {
    bf_len: c_uint,
    bf_insns: *mut libc::sock_filter,
}

/// `struct pcap_pkthdr` (for `pcap_offline_filter`).
#[repr(C)]
struct PcapPkthdr {
    ts: libc::timeval,
    caplen: u32,
    len: u32,
}

type PcapOpenDead = unsafe extern "C" fn(c_int, c_int) -> *mut c_void;
type PcapCompile =
    unsafe extern "C" fn(*mut c_void, *mut BpfProgram, *const c_char, c_int, u32) -> c_int;
type PcapGeterr = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type PcapClose = unsafe extern "C" fn(*mut c_void);
type PcapFreecode = unsafe extern "C" fn(*mut BpfProgram);
type PcapOfflineFilter =
    unsafe extern "C" fn(*const BpfProgram, *const PcapPkthdr, *const u8) -> c_int;

/// libpcap, loaded at run time for its filter compiler.
struct Libpcap {
    lib: libloading::Library,
}

/// `PCAP_NETMASK_UNKNOWN`: broadcast tests then fail to compile, as in tcpdump.
const PCAP_NETMASK_UNKNOWN: u32 = 0xffff_ffff;

impl Libpcap {
    fn load() -> Result<Libpcap, LiveError> {
        let mut errors = Vec::new();
        for name in ["libpcap.so.0.8", "libpcap.so.1", "libpcap.so"] {
            // SAFETY: loading libpcap runs no initialisers with preconditions.
            match unsafe { libloading::Library::new(name) } {
                Ok(lib) => return Ok(Libpcap { lib }),
                Err(e) => errors.push(e.to_string()),
            }
        }
        Err(LiveError::NoLibpcap(errors.join("; ")))
    }

    fn symbol<T: Copy>(&self, name: &[u8]) -> Result<T, LiveError> {
        // SAFETY: each symbol is declared with libpcap's C signature.
        unsafe { self.lib.get::<T>(name) }
            .map(|s| *s)
            .map_err(|e| LiveError::NoLibpcap(e.to_string()))
    }

    fn compile(
        &self,
        expression: &str,
        link_type: u32,
        snaplen: u32,
    ) -> Result<Program, LiveError> {
        let open_dead: PcapOpenDead = self.symbol(b"pcap_open_dead\0")?;
        let compile: PcapCompile = self.symbol(b"pcap_compile\0")?;
        let geterr: PcapGeterr = self.symbol(b"pcap_geterr\0")?;
        let close: PcapClose = self.symbol(b"pcap_close\0")?;
        let text = CString::new(expression).map_err(|_| LiveError::Filter {
            expression: expression.into(),
            message: "contains a NUL byte".into(),
        })?;
        // SAFETY: libpcap calls with the arguments its manual gives.
        unsafe {
            let p = open_dead(link_type as c_int, snaplen as c_int);
            if p.is_null() {
                return Err(LiveError::NoLibpcap("pcap_open_dead failed".into()));
            }
            let mut prog = BpfProgram {
                bf_len: 0,
                bf_insns: std::ptr::null_mut(),
            };
            let r = compile(p, &mut prog, text.as_ptr(), 1, PCAP_NETMASK_UNKNOWN);
            if r != 0 {
                let message = std::ffi::CStr::from_ptr(geterr(p))
                    .to_string_lossy()
                    .into_owned();
                close(p);
                return Err(LiveError::Filter {
                    expression: expression.into(),
                    message,
                });
            }
            close(p);
            Ok(Program { prog })
        }
    }
}

/// A compiled BPF program (libpcap's allocation).
struct Program {
    prog: BpfProgram,
}

impl Program {
    fn instructions(&self) -> &[libc::sock_filter] {
        if self.prog.bf_insns.is_null() {
            return &[];
        }
        // SAFETY: libpcap allocated bf_len instructions.
        unsafe { std::slice::from_raw_parts(self.prog.bf_insns, self.prog.bf_len as usize) }
    }

    fn free(&mut self, lib: &Libpcap) {
        if let Ok(freecode) = lib.symbol::<PcapFreecode>(b"pcap_freecode\0") {
            // SAFETY: frees what pcap_compile allocated, once.
            unsafe { freecode(&mut self.prog) };
        }
        self.prog.bf_insns = std::ptr::null_mut();
    }
}

/// A filter run in user space on each frame (cooked sockets whose program
/// reads cooked-header bytes the kernel does not have).
struct UserFilter {
    lib: Libpcap,
    program: Program,
}

impl UserFilter {
    fn matches(&self, data: &[u8], orig_len: u32, ts_ns: i64) -> bool {
        let Ok(run) = self
            .lib
            .symbol::<PcapOfflineFilter>(b"pcap_offline_filter\0")
        else {
            return true;
        };
        let hdr = PcapPkthdr {
            ts: libc::timeval {
                tv_sec: ts_ns.div_euclid(1_000_000_000) as libc::time_t,
                tv_usec: (ts_ns.rem_euclid(1_000_000_000) / 1000) as libc::suseconds_t,
            },
            caplen: data.len() as u32,
            len: orig_len,
        };
        // SAFETY: the program and the packet are valid for the call.
        unsafe { run(&self.program.prog, &hdr, data.as_ptr()) != 0 }
    }
}

impl Drop for UserFilter {
    fn drop(&mut self) {
        let lib = &self.lib;
        self.program.free(lib);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insn(code: u16, k: u32) -> libc::sock_filter {
        libc::sock_filter {
            code,
            jt: 0,
            jf: 0,
            k,
        }
    }

    #[test]
    fn cooked_program_loads_move_to_the_network_header_and_ancillary_fields() {
        // ldh [14] (protocol); ldb [16+9] (IPv4 protocol); ldb [0] (pkttype); ret #262144
        let mut p = vec![
            insn(0x28, 14),
            insn(0x30, 25),
            insn(0x30, 0),
            insn(0x06, 262144),
            insn(0x06, 0),
        ];
        assert!(fix_cooked_program(&mut p));
        assert_eq!(p[0].k as i32, SKF_AD_OFF + SKF_AD_PROTOCOL);
        assert_eq!(p[1].k, 9);
        assert_eq!(p[2].k as i32, SKF_AD_OFF + SKF_AD_PKTTYPE);
        assert_ne!(p[3].k, 0, "a match still accepts the packet");
        assert_eq!(p[4].k, 0, "a reject stays a reject");
    }

    #[test]
    fn cooked_program_reading_the_link_address_stays_in_user_space() {
        // ldb [6]: first byte of the link-layer address
        let mut p = vec![insn(0x30, 6), insn(0x06, 0)];
        assert!(!fix_cooked_program(&mut p));
    }

    #[test]
    fn cooked_header_is_libpcaps_linux_sll() {
        let sll = libc::sockaddr_ll {
            sll_family: libc::AF_PACKET as u16,
            sll_protocol: 0x0800u16.to_be(),
            sll_ifindex: 3,
            sll_hatype: ARPHRD_ETHER,
            sll_pkttype: PACKET_OUTGOING,
            sll_halen: 6,
            sll_addr: [1, 2, 3, 4, 5, 6, 0, 0],
        };
        assert_eq!(
            cooked_header(&sll),
            [0, 4, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x08, 0x00]
        );
    }

    #[test]
    fn unknown_interface_is_named() {
        let e = LiveCapture::open("rttdoc-no-such0", None, 65535)
            .err()
            .expect("no such interface");
        assert!(e.to_string().contains("rttdoc-no-such0"), "{e}");
    }

    /// UDP datagrams to a loopback port, captured on `lo` (Ethernet
    /// headers) and on `any` (cooked): each arrives once, filtered in the
    /// kernel to that port, with its payload intact. Needs CAP_NET_RAW and
    /// libpcap; skips without them.
    #[test]
    fn loopback_datagrams_arrive_once_through_the_filter() {
        for (iface, link) in [("lo", linktype::ETHERNET), ("any", linktype::LINUX_SLL)] {
            let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let port = rx.local_addr().unwrap().port();
            let filter = format!("udp dst port {port}");
            let mut cap = match LiveCapture::open(iface, Some(&filter), 65535) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("SKIPPED live capture on {iface}: {e}");
                    return;
                }
            };
            assert_eq!(cap.link_type(), link);
            let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            // Other traffic on the loopback the filter must keep out.
            let other = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            for i in 0..5u8 {
                tx.send_to(&[b'r', b't', i], ("127.0.0.1", port)).unwrap();
                tx.send_to(b"noise", other.local_addr().unwrap()).unwrap();
            }
            let mut seen = Vec::new();
            // Waits out the whole window: a copy (the loopback's sent
            // packet) or a packet the filter should have kept out would
            // arrive within it.
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            while std::time::Instant::now() < deadline {
                if let Some(f) = cap.next_frame(Duration::from_millis(200)).unwrap() {
                    assert_eq!(f.link_type, link);
                    seen.push(f.data[f.data.len() - 3..].to_vec());
                }
            }
            let want: Vec<Vec<u8>> = (0..5u8).map(|i| vec![b'r', b't', i]).collect();
            assert_eq!(seen, want, "on {iface}: each datagram once, nothing else");
            let st = cap.stats().unwrap();
            assert!(st.received >= 5, "{st:?}");
        }
    }

    /// The snapshot length cuts what is kept, not the length on the wire.
    #[test]
    fn snaplen_cuts_the_frame_and_keeps_its_wire_length() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = rx.local_addr().unwrap().port();
        let mut cap = match LiveCapture::open("lo", Some(&format!("udp dst port {port}")), 50) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("SKIPPED live capture on lo: {e}");
                return;
            }
        };
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.send_to(&[7u8; 300], ("127.0.0.1", port)).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        loop {
            assert!(std::time::Instant::now() < deadline, "nothing captured");
            if let Some(f) = cap.next_frame(Duration::from_millis(200)).unwrap() {
                assert_eq!(f.data.len(), 50);
                // Ethernet 14 + IPv4 20 + UDP 8 + 300.
                assert_eq!(f.orig_len, 342);
                break;
            }
        }
    }

    #[test]
    fn bad_filter_is_refused_with_libpcaps_words() {
        // Needs libpcap at run time (and CAP_NET_RAW for the socket);
        // compile alone shows the message path.
        let Ok(lib) = Libpcap::load() else {
            eprintln!("SKIPPED: libpcap not loadable");
            return;
        };
        let e = lib
            .compile("tcp port nonsense-port-name", linktype::ETHERNET, 65535)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("nonsense-port-name"), "{e}");
        let p = lib
            .compile("tcp port 443", linktype::ETHERNET, 65535)
            .expect("compiles");
        assert!(!p.instructions().is_empty());
    }
}
