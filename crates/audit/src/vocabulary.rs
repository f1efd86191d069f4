//! The one place audit checks meet capture finding kinds (docs/findings.md,
//! crates/analyze/src/detect/*.rs). Capture kinds are named by their JSON
//! names until the analysis exports a typed kind table; swapping the
//! strings for that enum happens here and nowhere else.

/// Capture finding kinds that show an audit check's cost when it happens.
pub fn confirms(check: &str) -> &'static [&'static str] {
    match check {
        // Nagle holding the end of the server's TLS flight for an ACK.
        "nagle_tls_flight" => &["nagle_hold"],
        // Nagle holding a response's tail behind its header (or behind
        // session tickets) on keep-alive connections.
        "nagle_keepalive" => &["write_write_read", "nagle_delayed_ack", "nagle_hold"],
        "chain_over_initcwnd" | "route_initcwnd_small" => &["initcwnd_limited"],
        "tfo_listener_without_kernel" => &["tfo_rejected"],
        "tfo_kernel_without_listener" => &["tfo_cookie_request"],
        "early_data_no_replay_guard" => &["early_data_unsafe", "early_data"],
        "early_data_ineffective" => &["early_data"],
        "no_resumption" => &["resumption_missed"],
        "hrr_curves" => &["hello_retry_request"],
        "slow_start_after_idle" => &["slow_start_after_idle"],
        "backlog_mismatch" => &["syn_retransmit"],
        "rsa_signing" => &["server_think_time"],
        // A held partial segment of a streamed response.
        "haproxy_msg_more" => &["nagle_hold"],
        _ => &[],
    }
}

/// Capture finding kinds whose presence shows an audit check's prediction
/// did not hold (the setting did not have the effect, or another setting
/// overrides it).
pub fn contradicts(check: &str) -> &'static [&'static str] {
    match check {
        "tfo_listener_without_kernel" => &["tfo_accepted"],
        "no_resumption" => &["resumption"],
        _ => &[],
    }
}

/// Every capture kind some check can confirm (to tell which capture
/// findings configuration could explain at all).
pub const CONFIG_EXPLAINABLE: &[&str] = &[
    "nagle_hold",
    "nagle_delayed_ack",
    "write_write_read",
    "initcwnd_limited",
    "tfo_rejected",
    "tfo_cookie_request",
    "early_data",
    "early_data_unsafe",
    "resumption_missed",
    "hello_retry_request",
    "slow_start_after_idle",
    "syn_retransmit",
    "server_think_time",
];
