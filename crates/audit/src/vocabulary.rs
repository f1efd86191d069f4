//! The one place audit checks meet capture finding kinds: the analysis'
//! typed table (`rttdoc_model::FindingKind`, docs/findings.md), so audit
//! and capture findings share one vocabulary.

use rttdoc_model::FindingKind;

/// Capture finding kinds that show an audit check's cost when it happens.
pub fn confirms(check: &str) -> &'static [FindingKind] {
    match check {
        // Nagle holding the end of the server's TLS flight for an ACK.
        "nagle_tls_flight" => &[FindingKind::NagleHold],
        // Nagle holding a response's tail behind its header (or behind
        // session tickets) on keep-alive connections.
        "nagle_keepalive" => &[
            FindingKind::WriteWriteRead,
            FindingKind::NagleDelayedAck,
            FindingKind::NagleHold,
        ],
        "chain_over_initcwnd" | "route_initcwnd_small" => &[FindingKind::InitcwndLimited],
        // A chain without its intermediate: clients fetch it (AIA).
        "chain_incomplete" => &[FindingKind::CertificateFetch],
        "tfo_listener_without_kernel" => &[FindingKind::TfoRejected],
        "tfo_kernel_without_listener" => &[FindingKind::TfoCookieRequest],
        "early_data_no_replay_guard" => &[FindingKind::EarlyDataUnsafe, FindingKind::EarlyData],
        "early_data_ineffective" => &[FindingKind::EarlyData],
        "no_resumption" => &[FindingKind::ResumptionMissed],
        "hrr_curves" => &[FindingKind::HelloRetryRequest],
        "slow_start_after_idle" => &[FindingKind::SlowStartAfterIdle],
        "backlog_mismatch" => &[FindingKind::SynRetransmit, FindingKind::AcceptQueueFull],
        // A full accept queue resetting completing handshakes.
        "abort_on_overflow" => &[FindingKind::ListenerReset],
        "rsa_signing" => &[FindingKind::ServerThinkTime],
        // A held partial segment of a streamed response.
        "haproxy_msg_more" => &[FindingKind::NagleHold],
        // A connection per proxied request: its handshake in the wait.
        "upstream_per_request" => &[FindingKind::UpstreamWait],
        // The server closing after each answer: the client's next request
        // waits for a new connection.
        "keepalive_off" => &[FindingKind::ConnectionNotReused],
        // Preflight answers the browser keeps 5 s: it asks again.
        "cors_preflight_uncached" => &[FindingKind::CorsPreflight],
        // Uploads paced by the window HAProxy grants its HTTP/2 clients.
        "h2_upload_window_small" => &[FindingKind::H2WindowLimited],
        _ => &[],
    }
}

/// Capture finding kinds whose presence shows an audit check's prediction
/// did not hold (the setting did not have the effect, or another setting
/// overrides it).
pub fn contradicts(check: &str) -> &'static [FindingKind] {
    match check {
        "tfo_listener_without_kernel" => &[FindingKind::TfoAccepted],
        "no_resumption" => &[FindingKind::Resumption],
        _ => &[],
    }
}

/// Every capture kind some check can confirm (to tell which capture
/// findings configuration could explain at all).
pub const CONFIG_EXPLAINABLE: &[FindingKind] = &[
    FindingKind::NagleHold,
    FindingKind::NagleDelayedAck,
    FindingKind::WriteWriteRead,
    FindingKind::InitcwndLimited,
    FindingKind::CertificateFetch,
    FindingKind::TfoRejected,
    FindingKind::TfoCookieRequest,
    FindingKind::EarlyData,
    FindingKind::EarlyDataUnsafe,
    FindingKind::ResumptionMissed,
    FindingKind::HelloRetryRequest,
    FindingKind::SlowStartAfterIdle,
    FindingKind::SynRetransmit,
    FindingKind::AcceptQueueFull,
    FindingKind::ListenerReset,
    FindingKind::ServerThinkTime,
    FindingKind::UpstreamWait,
    FindingKind::ConnectionNotReused,
    FindingKind::CorsPreflight,
    FindingKind::H2WindowLimited,
];
