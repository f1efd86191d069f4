#!/usr/bin/env python3
"""Writes rttdoc.json, the Grafana dashboard for rttdoc monitor's metrics
(docs/metrics.md). Edit here, run `python3 deploy/grafana/make-dashboard.py`,
commit both. crates/rttdoc/tests/deploy.rs checks every query uses only
metrics rttdoc exports."""
import json, os

DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'job=~"$job", instance=~"$instance"'
panels = []
y = 0


def q(expr, legend):
    return {"datasource": DS, "expr": expr, "legendFormat": legend, "range": True}


def add(title, targets, unit="short", kind="timeseries", w=12, h=8, desc="", stack=False, extra=None):
    global y
    x = 0 if len(panels) % 2 == 0 or w == 24 else 12
    if w == 24 and len(panels) % 2 == 1:
        panels.append(None)  # keep rows aligned
    p = {
        "type": kind, "title": title, "description": desc, "datasource": DS,
        "gridPos": {"x": x if w == 12 else 0, "y": y, "w": w, "h": h},
        "targets": [dict(t, refId=chr(65 + i)) for i, t in enumerate(targets)],
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["mean", "max"]},
                    "tooltip": {"mode": "multi"}},
    }
    if stack:
        p["fieldConfig"]["defaults"]["custom"] = {"stacking": {"mode": "normal"}, "fillOpacity": 40}
    if extra:
        p.update(extra)
    panels.append(p)
    if w == 24 or x == 12:
        y += h


def quantiles(metric, by, legend_by, unit, title, desc):
    add(title, [
        q(f'histogram_quantile(0.5, sum by (le, {by}) (rate({metric}_bucket{{{SEL}}}[$__rate_interval])))', f"P50 {legend_by}"),
        q(f'histogram_quantile(0.95, sum by (le, {by}) (rate({metric}_bucket{{{SEL}}}[$__rate_interval])))', f"P95 {legend_by}"),
    ], unit=unit, desc=desc)


quantiles("rttdoc_tls_handshake_round_trips", "tls_version", "{{tls_version}}", "short",
          "TLS handshake round trips, P50/P95 by version",
          "Ideal: 1 for TLS 1.3, 2 for a full TLS 1.2 handshake. More means extra round trips: see the causes.")
quantiles("rttdoc_tls_handshake_seconds", "tls_version", "{{tls_version}}", "s",
          "TLS handshake time, P50/P95 by version", "ClientHello to the client's Finished.")
quantiles("rttdoc_tcp_handshake_seconds", "vantage", "{{vantage}}", "s",
          "TCP handshake time, P50/P95", "SYN to the handshake's ACK: the path's round trip plus SYN retransmission timeouts.")
quantiles("rttdoc_time_to_first_byte_seconds", "tls_version", "{{tls_version}}", "s",
          "Time to first byte, P50/P95", "The connection's first request to its response's first byte.")
quantiles("rttdoc_name_lookup_seconds", "vantage", "{{vantage}}", "s",
          "Name lookup before connecting, P50/P95",
          "The client's DNS lookup of the server's name before its SYN, where the capture sees it (lost queries, search lists: see the causes).")
add("Time lost by cause", [
    q(f'sum by (kind) (rate(rttdoc_time_lost_seconds_total{{{SEL}}}[$__rate_interval]))', "{{kind}}"),
], unit="s", stack=True, desc="Seconds of waiting per second of traffic, by the finding that explains it.")
add("Top causes (connections with the finding, over the range)", [
    dict(q(f'topk(10, sum by (kind) (increase(rttdoc_findings_total{{{SEL}}}[$__range])))', "{{kind}}"), instant=True, range=False),
], kind="bargauge", extra={"options": {"orientation": "horizontal", "displayMode": "gradient",
                                        "reduceOptions": {"calcs": ["lastNotNull"], "values": False}}})
add("TFO hit rate", [
    q(f'sum(rate(rttdoc_tfo_total{{outcome="accepted", {SEL}}}[$__rate_interval])) / sum(rate(rttdoc_tfo_attempts_total{{{SEL}}}[$__rate_interval]))', "accepted / attempts"),
    q(f'sum by (outcome) (rate(rttdoc_tfo_total{{{SEL}}}[$__rate_interval])) / scalar(sum(rate(rttdoc_connections_total{{{SEL}}}[$__rate_interval])))', "{{outcome}} per connection"),
], unit="percentunit", desc="SYNs whose data the server accepted, of those that carried data under a cookie.")
add("0-RTT and resumption rates", [
    q(f'sum(rate(rttdoc_early_data_total{{outcome="accepted", {SEL}}}[$__rate_interval])) / sum(rate(rttdoc_early_data_total{{outcome="offered", {SEL}}}[$__rate_interval]))', "0-RTT accepted / offered"),
    q(f'sum(rate(rttdoc_resumption_total{{outcome="accepted", {SEL}}}[$__rate_interval])) / sum(rate(rttdoc_resumption_total{{outcome="offered", {SEL}}}[$__rate_interval]))', "resumed / offered"),
    q(f'sum(rate(rttdoc_resumption_total{{outcome="missed", {SEL}}}[$__rate_interval])) / sum(rate(rttdoc_resumption_total{{outcome="offered", {SEL}}}[$__rate_interval]))', "missed / offered"),
], unit="percentunit")
add("Connections per second by TLS version", [
    q(f'sum by (tls_version) (rate(rttdoc_connections_total{{{SEL}}}[$__rate_interval]))', "{{tls_version}}"),
], unit="cps", stack=True)
add("Excess round trips per connection, P50/P95", [
    q(f'histogram_quantile(0.5, sum by (le) (rate(rttdoc_excess_round_trips_bucket{{{SEL}}}[$__rate_interval])))', "P50"),
    q(f'histogram_quantile(0.95, sum by (le) (rate(rttdoc_excess_round_trips_bucket{{{SEL}}}[$__rate_interval])))', "P95"),
], desc="Round trips beyond the ideal in handshakes and first bytes.")
add("Server think time, P50/P95", [
    q(f'histogram_quantile(0.5, sum by (le) (rate(rttdoc_server_think_time_seconds_bucket{{{SEL}}}[$__rate_interval])))', "P50"),
    q(f'histogram_quantile(0.95, sum by (le) (rate(rttdoc_server_think_time_seconds_bucket{{{SEL}}}[$__rate_interval])))', "P95"),
], unit="s")
add("Retransmissions, SYN retransmits, HelloRetryRequests", [
    q(f'sum by (direction) (rate(rttdoc_retransmissions_total{{{SEL}}}[$__rate_interval]))', "retransmitted segments {{direction}}"),
    q(f'sum(rate(rttdoc_syn_retransmits_total{{{SEL}}}[$__rate_interval]))', "SYN retransmits"),
    q(f'sum(rate(rttdoc_hello_retry_requests_total{{{SEL}}}[$__rate_interval]))', "HelloRetryRequests"),
], unit="ops")
add("Capture health", [
    q(f'sum by (instance) (rate(rttdoc_capture_packets_total{{{SEL}}}[$__rate_interval]))', "packets/s {{instance}}"),
    q(f'sum by (instance) (rate(rttdoc_capture_dropped_packets_total{{{SEL}}}[$__rate_interval]))', "dropped/s {{instance}}"),
    q(f'sum by (instance) (rate(rttdoc_flows_evicted_total{{{SEL}}}[$__rate_interval]))', "evicted flows/s {{instance}}"),
    q(f'sum by (instance) (rttdoc_open_flows{{{SEL}}})', "open flows {{instance}}"),
], w=24, desc="Drops or evictions mean the panels above miss connections.")
add("rttdoc versions", [
    dict(q(f'count by (version) (rttdoc_build_info{{{SEL}}})', "{{version}}"), instant=True, range=False, format="table"),
], kind="table", w=24, h=5)

dashboard = {
    "title": "rttdoc: TCP/TLS round trips",
    "uid": "rttdoc-monitor",
    "description": "Why connections take more round trips than they should (rttdoc monitor; docs/metrics.md).",
    "tags": ["rttdoc", "tls", "tcp"],
    "timezone": "browser",
    "schemaVersion": 39,
    "version": 1,
    "editable": True,
    "refresh": "30s",
    "time": {"from": "now-6h", "to": "now"},
    "templating": {"list": [
        {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"},
        {"name": "job", "type": "query", "datasource": DS, "label": "Job",
         "query": {"query": "label_values(rttdoc_build_info, job)", "refId": "job"},
         "definition": "label_values(rttdoc_build_info, job)",
         "includeAll": True, "multi": True, "allValue": ".*", "refresh": 2},
        {"name": "instance", "type": "query", "datasource": DS, "label": "Instance",
         "query": {"query": "label_values(rttdoc_build_info{job=~\"$job\"}, instance)", "refId": "instance"},
         "definition": "label_values(rttdoc_build_info{job=~\"$job\"}, instance)",
         "includeAll": True, "multi": True, "allValue": ".*", "refresh": 2},
    ]},
    "panels": [dict(p, id=i + 1) for i, p in enumerate(p for p in panels if p)],
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rttdoc.json")
with open(out, "w") as f:
    json.dump(dashboard, f, indent=2)
    f.write("\n")
