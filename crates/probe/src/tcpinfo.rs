//! The kernel's view of the probe's connection (`getsockopt(TCP_INFO)`):
//! what the probe still knows without a capture.

use serde::Serialize;

/// `struct tcp_info` of linux/tcp.h, up to the fields read here (the
/// kernel fills as much as it has; older kernels leave the rest zero).
#[repr(C)]
#[derive(Default)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscales: u8,
    /// bit 0: delivery_rate_app_limited; bits 1-2: fastopen_client_fail.
    flags: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
}

/// `TCPI_OPT_SYN_DATA`: the SYN-ACK acknowledged data sent in the SYN.
const TCPI_OPT_SYN_DATA: u8 = 32;

/// What TCP_INFO told, in the units people read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TcpInfo {
    /// Smoothed RTT (ms).
    pub srtt_ms: f64,
    /// Its variation (ms).
    pub rttvar_ms: f64,
    /// Smallest RTT sample (ms), 0 if the kernel does not say.
    pub min_rtt_ms: f64,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// Last delivery-rate sample, bits per second.
    pub delivery_rate_bps: u64,
    /// Congestion window (segments) and MSS when read.
    pub snd_cwnd: u32,
    pub snd_mss: u32,
    /// The SYN-ACK acknowledged the data in our SYN (TFO accepted).
    pub syn_data_acked: bool,
    /// Why TCP Fast Open failed on the client (kernel 5.5+):
    /// `cookie_unavailable`, `data_not_acked`, `syn_retransmitted`, or
    /// null.
    pub fastopen_client_fail: Option<&'static str>,
}

/// Reads TCP_INFO of a connected TCP socket.
pub fn read(fd: libc::c_int) -> Option<TcpInfo> {
    let mut raw = RawTcpInfo::default();
    let mut len = std::mem::size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `raw`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut raw as *mut RawTcpInfo as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    Some(TcpInfo {
        srtt_ms: raw.rtt as f64 / 1000.0,
        rttvar_ms: raw.rttvar as f64 / 1000.0,
        min_rtt_ms: raw.min_rtt as f64 / 1000.0,
        total_retrans: raw.total_retrans,
        delivery_rate_bps: raw.delivery_rate * 8,
        snd_cwnd: raw.snd_cwnd,
        snd_mss: raw.snd_mss,
        syn_data_acked: raw.options & TCPI_OPT_SYN_DATA != 0,
        fastopen_client_fail: match (raw.flags >> 1) & 3 {
            1 => Some("cookie_unavailable"),
            2 => Some("data_not_acked"),
            3 => Some("syn_retransmitted"),
            _ => None,
        },
    })
}
