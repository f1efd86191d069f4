//! HTTP/2 in cleartext (h2c with prior knowledge, RFC 9113 3.3: gRPC
//! inside a cluster, Envoy and other sidecars, nginx `listen ... http2`
//! without TLS): which frames ask, which answer, and which are neither.
//!
//! Read as bytes that take turns, an HTTP/2 connection's flow control
//! and liveness frames are turns of their own: a gRPC client acknowledges
//! data with a WINDOW_UPDATE and probes the path with a PING (its BDP
//! estimator) while an answer streams in, and each message of a
//! server-streaming call then "answered" the frame before it, the
//! server's pause between messages measured as its think time; a large
//! download's WINDOW_UPDATEs cut its transfer into pieces. The frames say
//! what asks:
//!
//! | client sends                         | answered by                              |
//! |--------------------------------------|------------------------------------------|
//! | HEADERS opening a stream (a request) | the server's HEADERS on that stream, or its RST_STREAM |
//!
//! The rest of a request (its DATA, CONTINUATION and trailers) goes on
//! with it; the client's other frames (the preface and SETTINGS,
//! WINDOW_UPDATE, PING, SETTINGS and PING acknowledgments, PRIORITY,
//! RST_STREAM, GOAWAY, a message on a stream already answered) neither
//! ask nor end a turn: they are beside the turns. A PING is answered at
//! once by the peer's HTTP/2 layer and nobody's work waits for it (grpc
//! sends one with a request, whose answer then came first and hid the
//! request's wait). An answer goes on with its stream's DATA,
//! CONTINUATION and trailers; the server's other frames (its preface's
//! SETTINGS, WINDOW_UPDATE, PINGs and their acknowledgments, GOAWAY,
//! PUSH_PROMISE) answer nothing.
//!
//! Several requests sent before any answer are one turn, as pipelined
//! HTTP/1.1 requests are (the exchanges' model has one turn open at a
//! time): its first answer on any of their streams answers it, the
//! others' answers go on with it while it is the turn under way, and an
//! answer to an earlier turn's request after a new one began answers
//! nothing (its wait is not measured, never taken for the new one's).
//!
//! A connection is h2c when the client's first bytes are the connection
//! preface (`PRI * HTTP/2.0`), or the server's first data is a SETTINGS
//! frame (a server may send its preface as it accepts, before the
//! client's: grpc-go does), or, in a capture begun after the connection's
//! handshake (a long-lived gRPC channel), a segment of either side is
//! two or more whole frames from its first byte to its last (the chance
//! that other bytes chain so is about one in four billion; the requests
//! are not named there: HPACK's table began before the capture), or an
//! HTTP/1.1 request asked to upgrade to
//! it (`Upgrade: h2c`, curl's `--http2` on an `http://` URL) and the
//! server's `101` agreed: the request goes on as stream 1, answered by
//! that stream's HEADERS (the `101` leaves before the server's work on
//! it). Frames are followed across segments by their lengths
//! (crate::framing).

use crate::connection::Stamp;
use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

use rttdoc_wire::http2::{
    ACK, CONTINUATION, DATA, END_HEADERS, END_STREAM, FRAME_HEADER as HEADER, GOAWAY, HEADERS,
    PADDED, PING, PREFACE, PRIORITY, PRIORITY_FLAG, PUSH_PROMISE, RST_STREAM, SETTINGS,
    WINDOW_UPDATE,
};

/// Extension frames a server may send (RFC 7838 ALTSVC, RFC 8336 ORIGIN,
/// RFC 9218 PRIORITY_UPDATE): read past, they mean nothing here.
const EXTENSIONS: [u8; 3] = [0xa, 0xc, 0x10];

/// Questions of one turn remembered: a client sends a few requests at
/// once as a rule (a browser dozens); a forgotten one only leaves its
/// answer out of the turn.
const MAX_ASKED: usize = 64;

/// One connection's HTTP/2 cleartext reading (crate::reader).
pub(crate) type H2c = Reading<State>;

/// A frame's header: type, flags, stream, payload length.
type Frame = (u8, u8, u32, u32);

/// The largest HPACK table a client may use here (the server's
/// SETTINGS_HEADER_TABLE_SIZE; 4 KB by default, 64 KB and more seen):
/// each side's decoder follows that side's table up to this.
const MAX_TABLE: u32 = 1 << 16;
/// A header block gathered from a HEADERS frame and its CONTINUATIONs is
/// at most this large; a larger one ends the naming.
const MAX_BLOCK: usize = 64 << 10;

/// One side's header blocks, decoded in order (HPACK's dynamic table
/// kept in step with the sender's): a HEADERS or PUSH_PROMISE frame's
/// fragment, then its CONTINUATIONs'.
struct HeaderBlocks {
    decoder: rttdoc_wire::hpack::Decoder,
    /// The block under way.
    block: Vec<u8>,
    /// The fields of the block last decoded (kept for their room).
    fields: Vec<rttdoc_wire::hpack::Field>,
    /// The stream the block under way is on.
    stream: u32,
}

impl std::fmt::Debug for HeaderBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeaderBlocks")
            .field("block", &self.block.len())
            .field("stream", &self.stream)
            .finish()
    }
}

impl Default for HeaderBlocks {
    fn default() -> HeaderBlocks {
        HeaderBlocks {
            decoder: rttdoc_wire::hpack::Decoder::new(MAX_TABLE),
            block: Vec::new(),
            fields: Vec::new(),
            stream: 0,
        }
    }
}

impl HeaderBlocks {
    /// A header block fragment (`payload` as captured, `length` the
    /// frame's): when it ends the block, the block's fields go to `field`
    /// and its stream is returned. `Err` when the block cannot be had
    /// whole or does not decode (the table is out of step from then on).
    fn fragment(
        &mut self,
        (kind, flags, stream, length): Frame,
        payload: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<Option<u32>, ()> {
        let payload = payload.get(..length as usize).ok_or(())?;
        let fragment = if matches!(kind, HEADERS | PUSH_PROMISE) {
            self.block.clear();
            self.stream = stream;
            let padded = flags & PADDED != 0;
            let pad = if padded {
                *payload.first().ok_or(())? as usize
            } else {
                0
            };
            // (A HEADERS frame's priority fields, a PUSH_PROMISE's
            // promised stream.)
            let fields = if kind == HEADERS {
                5 * (flags & PRIORITY_FLAG != 0) as usize
            } else {
                4
            };
            payload
                .get(padded as usize + fields..payload.len().checked_sub(pad).ok_or(())?)
                .ok_or(())?
        } else {
            payload
        };
        if self.block.len() + fragment.len() > MAX_BLOCK {
            return Err(());
        }
        self.block.extend_from_slice(fragment);
        if flags & END_HEADERS == 0 {
            return Ok(None);
        }
        // (The decoder consumes the block as it decodes it.)
        self.decoder
            .decode(&mut self.block, &mut self.fields)
            .map_err(|_| ())?;
        self.block.clear();
        for (name, value, _) in &self.fields {
            field(name, value);
        }
        Ok(Some(self.stream))
    }
}

/// A request's header block's fields that name it and say what it asked
/// for.
#[derive(Default)]
struct RequestFields {
    method: Option<String>,
    path: Option<String>,
    https: bool,
    authority: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    authorization: Option<Vec<u8>>,
    proxy_authorization: Option<Vec<u8>>,
    /// A CORS preflight's `access-control-request-method` and
    /// `-headers` (preflight.rs).
    request_method: Option<Vec<u8>>,
    request_headers: Option<Vec<u8>>,
}

impl RequestFields {
    fn field(&mut self, name: &[u8], value: &[u8]) {
        let text = || String::from_utf8_lossy(value).into_owned();
        match name {
            b":method" => self.method = Some(text()),
            b":path" => self.path = Some(text()),
            b":scheme" => self.https = value == b"https",
            b":authority" => self.authority = Some(value.to_vec()),
            b"host" => self.host = Some(value.to_vec()),
            b"authorization" => self.authorization = Some(value.to_vec()),
            b"proxy-authorization" => self.proxy_authorization = Some(value.to_vec()),
            b"access-control-request-method" => self.request_method = Some(value.to_vec()),
            b"access-control-request-headers" => self.request_headers = Some(value.to_vec()),
            _ => {}
        }
    }

    /// The CORS preflight it is, if it is one (preflight.rs).
    fn preflight(&self, asked: &crate::redirect::Asked) -> Option<crate::preflight::Preflight> {
        crate::preflight::Preflight::of_h2(
            self.method.as_ref()?.as_bytes(),
            self.request_method.as_deref(),
            self.request_headers.as_deref(),
            asked,
        )
    }

    /// What it asks and the credentials it carries (challenge.rs).
    fn retry(&self, asked: &crate::redirect::Asked) -> Option<crate::challenge::Retry> {
        Some(crate::challenge::Retry::of_h2(
            self.method.as_ref()?.as_bytes(),
            asked,
            self.authorization.as_deref(),
            self.proxy_authorization.as_deref(),
        ))
    }

    /// The URL it asked for (redirect.rs), when it names one.
    fn asked(&self) -> Option<crate::redirect::Asked> {
        if self.method.as_deref() == Some("CONNECT") {
            return None;
        }
        let authority = self.authority.as_ref().or(self.host.as_ref())?;
        crate::redirect::Asked::of_h2(self.https, authority, self.path.as_ref()?.as_bytes())
    }
}

/// An answer's header block's fields that say where it sends its client
/// or what it asks of it.
#[derive(Default)]
struct AnswerFields {
    status: Option<u16>,
    location: Option<Vec<u8>>,
    /// A `www-authenticate` or `proxy-authenticate` field's value (its
    /// first: the scheme a client tries first).
    challenge: Option<Vec<u8>>,
    /// An `access-control-max-age` field's value (preflight.rs).
    max_age: Option<Vec<u8>>,
}

impl AnswerFields {
    fn field(&mut self, name: &[u8], value: &[u8]) {
        match name {
            b":status" => {
                self.status = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok())
            }
            b"location" => self.location = Some(value.to_vec()),
            b"www-authenticate" | b"proxy-authenticate" if self.challenge.is_none() => {
                self.challenge = Some(value.to_vec())
            }
            b"access-control-max-age" => self.max_age = Some(value.to_vec()),
            _ => {}
        }
    }
}

/// A request whose answer may send its client elsewhere or challenge it:
/// what a redirect is resolved against and a challenge kept under, until
/// its final answer comes.
#[derive(Debug)]
struct Requested {
    stream: u32,
    /// The segment its HEADERS began in.
    at: Stamp,
    asked: crate::redirect::Asked,
    retry: Option<crate::challenge::Retry>,
    /// It was a CORS preflight: what it asked permission for.
    preflight: Option<crate::preflight::Preflight>,
    label: Option<String>,
    /// It was the connection's first request.
    first: bool,
}

/// What a segment told of redirects and authentication challenges
/// (redirect.rs, challenge.rs; track.rs takes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FollowUpNote {
    /// A request opened, asking for `asked` with the credentials `retry`
    /// names (it may follow a redirect or answer a challenge).
    Opened {
        asked: crate::redirect::Asked,
        retry: Option<crate::challenge::Retry>,
        at: Stamp,
        /// The connection's first request.
        first: bool,
    },
    /// A request's final answer was a redirect.
    Redirected {
        location: crate::redirect::Location,
        status: u16,
        /// The redirected request's first segment.
        request: Stamp,
        request_label: Option<String>,
        /// The redirected request was the connection's first.
        first: bool,
        /// The segment the answer's HEADERS began in.
        answer: Stamp,
    },
    /// A request's final answer was an authentication challenge.
    Challenged {
        challenge: crate::challenge::Challenge,
        retry: crate::challenge::Retry,
        status: u16,
        request: Stamp,
        request_label: Option<String>,
        answer: Stamp,
    },
    /// A CORS preflight's final answer allowed its request.
    Preflighted {
        preflight: crate::preflight::Preflight,
        status: u16,
        /// The answer's `access-control-max-age`, in seconds.
        max_age_s: Option<u32>,
        request: Stamp,
        request_label: Option<String>,
        answer: Stamp,
    },
}

/// What an h2c connection's reading keeps.
#[derive(Debug, Default)]
pub struct State {
    follow: [Follow; 2],
    /// Per direction: whether the frame a segment's end cut, whose rest
    /// begins the next segment, was part of a question (the client's) or
    /// an answer (the server's); `None` when no frame is under way.
    under_way: [Option<bool>; 2],
    /// The client's connection preface was read.
    preface_seen: bool,
    /// The client's header blocks, for the requests' names; `None` once
    /// one was lost (a hole, a block cut by the capture, one that does not
    /// decode): the requests are named `HEADERS` from then on.
    names: Option<HeaderBlocks>,
    /// Whether the names were given up.
    unnamed: bool,
    /// The client's block under way opened a request, its segment's
    /// first (whose turn its name names), in the segment at `block_at`.
    block_opens: bool,
    names_turn: bool,
    block_at: Stamp,
    /// The name of the request the segment's first question opened.
    pending: Option<String>,
    /// The server's header blocks, for its answers' status and
    /// `location` (redirect.rs); `None` once one was lost.
    answers: Option<HeaderBlocks>,
    answers_lost: bool,
    /// Requests whose final answer has not come, newest last (at most
    /// [`MAX_ASKED`]).
    requests: Vec<Requested>,
    /// The stream of the connection's first request.
    first_request: Option<u32>,
    /// What the segment told of redirects (track.rs takes them).
    notes: Vec<FollowUpNote>,
    /// The segment being read.
    at: Stamp,
    /// The highest stream the client opened: a HEADERS on a stream at or
    /// below it is a request's trailers, not a request.
    last_stream: u32,
    /// The requests (streams) of the turn under way.
    asked: Vec<u32>,
    /// Streams of the turn under way whose answers began and go on.
    answering: Vec<u32>,
    /// The turn under way was answered: the client's next question opens
    /// another.
    answered: bool,
    /// Each sender's flow-control credit, followed from the connection's
    /// first bytes (h2_credit.rs); `None` in a capture begun later or
    /// after an upgrade from HTTP/1.1 (whose first SETTINGS rode in a
    /// header).
    credit: Option<Box<crate::h2_credit::FlowCredit>>,
    /// Whether the credit was started or ruled out.
    credit_decided: bool,
    /// The last packet of the segment (or record) being read.
    last: Stamp,
}

impl H2c {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed; a TLS record's plaintext
    /// from its first packet `at` to its last `last`); `None` when the
    /// connection is not h2c. `sides`: each sender's side of the round
    /// trip from the capture point (the handshake's; h2_credit.rs).
    pub(crate) fn read(
        &mut self,
        dir: Direction,
        head: &[u8],
        len: u64,
        mid_stream: bool,
        (at, last): (Stamp, Stamp),
        sides: [i64; 2],
    ) -> Option<Turns> {
        let client = dir == Direction::ClientToServer;
        let preface = client && head.starts_with(PREFACE);
        let mut joined = false;
        let state = self.state(|| {
            let settings = !client && is_settings(head) && whole_messages(head, len, frame);
            if preface || settings || !mid_stream {
                return Some(preface || settings);
            }
            // Joined in the middle: one frame alone may be anything's
            // (told by the next segment), two or more chained are HTTP/2.
            let frames = frames_from_start(head, len);
            joined = frames == Some(true);
            frames
        })?;
        if joined {
            state.give_up_names();
            state.give_up_answers();
        }
        if !state.credit_decided {
            state.credit_decided = true;
            if !joined && !mid_stream {
                let mut credit = Box::<crate::h2_credit::FlowCredit>::default();
                credit.set_sides(sides);
                state.credit = Some(credit);
            }
        }
        state.at = at;
        state.last = last;
        if preface && !state.preface_seen {
            state.preface_seen = true;
            let n = PREFACE.len() as u64;
            return Some(state.read(dir, &head[PREFACE.len()..], len - n));
        }
        Some(state.read(dir, head, len))
    }
}

impl H2c {
    /// The server agreed to an HTTP/1.1 request's `Upgrade: h2c`: frames
    /// from here on, the request stream 1's, still to be answered.
    /// `request` is what the HTTP/1.1 request asked for, its first
    /// segment and its name, when its head named a URL.
    pub(crate) fn upgraded(
        &mut self,
        request: Option<(crate::redirect::Asked, Stamp, Option<String>)>,
    ) {
        let s = self.begin();
        s.credit_decided = true;
        s.last_stream = 1;
        s.asked.push(1);
        s.first_request = Some(1);
        if let Some((asked, at, label)) = request {
            s.requests.push(Requested {
                stream: 1,
                at,
                asked,
                // (Its credentials were in its HTTP/1.1 head.)
                retry: None,
                preflight: None,
                label,
                first: true,
            });
        }
    }

    /// The name (method and path) of the request that opened the last
    /// segment's turn, when its header block could be decoded.
    pub(crate) fn take_name(&mut self) -> Option<String> {
        self.state(|| None)?.pending.take()
    }

    /// What the last segments told of redirects, taken (track.rs).
    pub(crate) fn take_follow_up_notes(&mut self) -> Vec<FollowUpNote> {
        self.state(|| None)
            .map(|s| std::mem::take(&mut s.notes))
            .unwrap_or_default()
    }

    /// The stalls on HTTP/2 credit found so far whose sender went on in
    /// the frames `frames`, taken out (h2_credit.rs).
    pub(crate) fn take_credit_stalls(
        &mut self,
        frames: std::ops::RangeInclusive<u64>,
    ) -> Vec<crate::h2_credit::H2CreditStall> {
        self.state(|| None)
            .and_then(|s| s.credit.as_deref_mut())
            .map(|c| c.take_stalls(frames))
            .unwrap_or_default()
    }

    /// Whether segments told of redirects that are not taken yet.
    pub(crate) fn has_follow_up_notes(&mut self) -> bool {
        self.state(|| None).is_some_and(|s| !s.notes.is_empty())
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        if len == 0 {
            m.aside = client;
            return m;
        }
        let d = dir.index();
        if client {
            // A name is for the turn its segment opened, no later one.
            self.pending = None;
        }
        // The follow is taken out while its walk tells this state of the
        // frames (and put back after).
        let mut follow = self.follow[d];
        if let Some(c) = self
            .credit
            .as_deref_mut()
            .filter(|_| follow.ends_within(len))
        {
            c.frame_ended(dir, self.last);
        }
        let mut last: Option<bool> = None;
        let walked = follow.walk(head, len, frame, |f, bytes, at| {
            let payload = bytes.get(HEADER..).unwrap_or(&[]);
            if let Some(c) = self.credit.as_deref_mut() {
                let ends_here = at + (HEADER as i64) + i64::from(f.3) <= len as i64;
                c.frame(dir, f, payload, self.at, ends_here.then_some(self.last));
            }
            last = Some(if client {
                self.client_frame(f, payload, &mut m)
            } else {
                self.server_frame(f, payload, &mut m)
            });
        });
        self.follow[d] = follow;
        let Some(walked) = walked else {
            // Lost in a hole: what this is cannot be told.
            self.lose_credit();
            self.under_way[d] = None;
            self.give_up_blocks(client);
            m.aside = client;
            return m;
        };
        if walked.continued && self.under_way[d] == Some(true) {
            if client {
                m.continues = !self.answered;
            } else {
                m.extends = true;
            }
        }
        if walked.cut_at.is_some() {
            // A frame the capture lost or cut: perhaps a header block.
            self.give_up_blocks(client);
            self.lose_credit();
        }
        // The frame the segment's end cut goes on in the next.
        self.under_way[d] = match walked.cut_at {
            Some(_) => None,
            None if follow.inside() => last.or(self.under_way[d]),
            None => None,
        };
        if client && m.asks.is_none() && !m.continues {
            m.aside = true;
        }
        // (The answer's own frames in the segment that began it are part
        // of it.)
        m.extends &= !m.answers;
        m
    }

    /// The flow-control credit is no longer known (a hole, a frame cut).
    fn lose_credit(&mut self) {
        if let Some(c) = self.credit.as_deref_mut() {
            c.lose();
        }
    }

    /// The requests are named `HEADERS` from now on: a header block was
    /// lost, and HPACK's table with it.
    fn give_up_names(&mut self) {
        self.unnamed = true;
        self.names = None;
        self.requests.clear();
    }

    /// A header block of the client's (`client`) or the server's may
    /// have been lost: that side's blocks are read no more.
    fn give_up_blocks(&mut self, client: bool) {
        if client {
            self.give_up_names();
        } else {
            self.give_up_answers();
        }
    }

    /// The answers' status and `location` are not read from now on: a
    /// header block of the server's was lost, and HPACK's table with it.
    fn give_up_answers(&mut self) {
        self.answers_lost = true;
        self.answers = None;
        self.requests.clear();
    }

    /// The client's header block on `stream` ended, its fields `f`.
    fn request_block(&mut self, stream: u32, f: RequestFields) {
        let label = f
            .method
            .as_deref()
            .zip(f.path.as_deref())
            .map(|(m, p)| crate::exchange::request_label(m, p));
        if self.names_turn {
            self.pending.clone_from(&label);
        }
        if !self.block_opens {
            return;
        }
        let first = self.first_request == Some(stream);
        if let Some(asked) = f.asked() {
            let at = self.block_at;
            let retry = f.retry(&asked);
            let preflight = f.preflight(&asked);
            self.notes.push(FollowUpNote::Opened {
                asked,
                retry,
                at,
                first,
            });
            // (Its answer can no longer be read: it may still follow
            // another's.)
            if self.answers_lost {
                return;
            }
            let requested = Requested {
                stream,
                at,
                asked,
                retry,
                preflight,
                label,
                first,
            };
            crate::reader::push_bounded(&mut self.requests, requested, MAX_ASKED);
        }
    }

    /// The server's header block on `stream` ended, with `a`'s fields: a
    /// final answer settles its request, and a redirect or a challenge
    /// is noted.
    fn answer_block(&mut self, stream: u32, a: AnswerFields) {
        // (1xx answers are interim; trailers have no status.)
        let Some(status) = a.status.filter(|&s| s >= 200) else {
            return;
        };
        let Some(i) = self.requests.iter().position(|r| r.stream == stream) else {
            return;
        };
        let r = self.requests.remove(i);
        if let Some(preflight) = r.preflight {
            if crate::preflight::allows(status) {
                self.notes.push(FollowUpNote::Preflighted {
                    preflight,
                    status,
                    max_age_s: crate::preflight::max_age_of(a.max_age.as_deref()),
                    request: r.at,
                    request_label: r.label,
                    answer: self.at,
                });
            }
            return;
        }
        if crate::challenge::is_challenge_status(status) {
            let challenge = a
                .challenge
                .and_then(|v| crate::challenge::Challenge::of_value(status, &v));
            if let (Some(challenge), Some(retry)) = (challenge, r.retry) {
                self.notes.push(FollowUpNote::Challenged {
                    challenge,
                    retry,
                    status,
                    request: r.at,
                    request_label: r.label,
                    answer: self.at,
                });
            }
            return;
        }
        if !crate::redirect::is_redirect_status(status) {
            return;
        }
        let Some(location) = a
            .location
            .and_then(|l| crate::redirect::Location::of_value(&l, &r.asked))
        else {
            return;
        };
        self.notes.push(FollowUpNote::Redirected {
            location,
            status,
            request: r.at,
            request_label: r.label,
            first: r.first,
            answer: self.at,
        });
    }

    /// Whether client frames on `stream` are part of a question of the
    /// turn under way, not yet answered.
    fn part_of_question(&self, stream: u32) -> bool {
        !self.answered && self.asked.contains(&stream)
    }

    /// A new question: after an answer, it opens another turn.
    fn ask(&mut self, stream: u32, m: &mut Turns) {
        if self.answered {
            self.asked.clear();
            self.answering.clear();
            self.answered = false;
        }
        crate::reader::push_bounded(&mut self.asked, stream, MAX_ASKED);
        m.asks.get_or_insert("HEADERS");
    }

    /// A client frame: what it means for the segment's turns in `m`;
    /// whether it is part of a question.
    fn client_frame(
        &mut self,
        (kind, flags, stream, length): Frame,
        payload: &[u8],
        m: &mut Turns,
    ) -> bool {
        let opens = kind == HEADERS && stream % 2 == 1 && stream > self.last_stream;
        if opens && self.last_stream == 0 {
            self.first_request = Some(stream);
        }
        if matches!(kind, HEADERS | CONTINUATION) && !self.unnamed {
            if kind == HEADERS {
                self.block_opens = opens;
                self.names_turn = opens && m.asks.is_none();
                self.block_at = self.at;
            }
            let mut fields = RequestFields::default();
            let names = self.names.get_or_insert_default();
            match names.fragment((kind, flags, stream, length), payload, |n, v| {
                fields.field(n, v)
            }) {
                Ok(Some(stream)) => self.request_block(stream, fields),
                Ok(None) => {}
                Err(()) => self.give_up_names(),
            }
        }
        match kind {
            HEADERS if opens => {
                self.last_stream = stream;
                self.ask(stream, m);
                true
            }
            HEADERS | DATA | CONTINUATION => {
                let part = self.part_of_question(stream);
                m.continues |= part;
                part
            }
            // A request withdrawn: nothing will answer it.
            RST_STREAM => {
                self.asked.retain(|&s| s != stream);
                false
            }
            _ => false,
        }
    }

    /// A server frame: what it means for the segment's turns in `m`;
    /// whether it is part of an answer.
    fn server_frame(
        &mut self,
        (kind, flags, stream, length): Frame,
        payload: &[u8],
        m: &mut Turns,
    ) -> bool {
        if matches!(kind, HEADERS | CONTINUATION | PUSH_PROMISE)
            && !self.answers_lost
            && !self.unnamed
        {
            let mut fields = AnswerFields::default();
            let answers = self.answers.get_or_insert_default();
            let ended = answers.fragment((kind, flags, stream, length), payload, |n, v| {
                fields.field(n, v)
            });
            match ended {
                // (A PUSH_PROMISE's block is a promised request's: no status.)
                Ok(Some(stream)) => self.answer_block(stream, fields),
                Ok(None) => {}
                Err(()) => self.give_up_answers(),
            }
        }
        let answer = self.answering.contains(&stream) || self.asked.contains(&stream);
        match kind {
            HEADERS | RST_STREAM if self.asked.contains(&stream) => {
                self.asked.retain(|&s| s != stream);
                m.answers = true;
                self.answered = true;
                if kind == HEADERS && flags & END_STREAM == 0 {
                    crate::reader::push_bounded(&mut self.answering, stream, MAX_ASKED);
                }
            }
            HEADERS | DATA | CONTINUATION if self.answering.contains(&stream) => {
                m.extends = true;
                if kind != CONTINUATION && flags & END_STREAM != 0 {
                    self.answering.retain(|&s| s != stream);
                }
            }
            RST_STREAM => {
                self.answering.retain(|&s| s != stream);
                return false;
            }
            _ => return false,
        }
        answer && matches!(kind, HEADERS | DATA | CONTINUATION)
    }
}

/// The frame at the start of `bytes`: its type, flags and stream, and its
/// whole length; `None` when it is none of HTTP/2's (an unknown type, a
/// stream where the type allows none or none where it needs one, a fixed
/// size not kept, the reserved bit set) or the bytes end inside its
/// header.
fn frame(bytes: &[u8]) -> Option<(Frame, u64)> {
    let h = bytes.get(..HEADER)?;
    let length = u32::from_be_bytes([0, h[0], h[1], h[2]]);
    let (kind, flags) = (h[3], h[4]);
    let raw = u32::from_be_bytes([h[5], h[6], h[7], h[8]]);
    let stream = raw & 0x7fff_ffff;
    let valid = raw & 0x8000_0000 == 0
        && match kind {
            DATA | HEADERS | CONTINUATION | PUSH_PROMISE => stream != 0,
            PRIORITY => stream != 0 && length == 5,
            RST_STREAM => stream != 0 && length == 4,
            SETTINGS => {
                stream == 0 && length.is_multiple_of(6) && (flags & ACK == 0 || length == 0)
            }
            PING => stream == 0 && length == 8,
            GOAWAY => stream == 0 && length >= 8,
            WINDOW_UPDATE => length == 4,
            k => EXTENSIONS.contains(&k),
        };
    valid.then_some((
        (kind, flags, stream, length),
        HEADER as u64 + u64::from(length),
    ))
}

/// Who sent `payload` (the client: `Some(true)`), when it is HTTP/2:
/// the client's preface, or frames from its first byte whose first
/// HEADERS block (whole in the payload) begins with a request's
/// pseudo-header (`:authority`, `:method`, `:path`, `:scheme`: HPACK's
/// static entries 1-7, indexed or as a literal's name) or with
/// `:status` (8-14, the server's answer). For a capture begun after the
/// handshake, whose roles the ports only guessed.
pub(crate) fn speaker(payload: &[u8]) -> Option<bool> {
    if payload.starts_with(PREFACE) {
        return Some(true);
    }
    let mut at = 0usize;
    loop {
        let ((kind, flags, _, length), total) = frame(payload.get(at..)?)?;
        if kind == HEADERS {
            let fragment = payload.get(at + HEADER..at + HEADER + length as usize)?;
            let skip = (flags & PADDED != 0) as usize + 5 * (flags & PRIORITY_FLAG != 0) as usize;
            let mut block = fragment.get(skip..)?;
            // Dynamic table size updates (001xxxxx, a 5-bit prefix and
            // its continuation bytes) may come first.
            while block.first().is_some_and(|&b| b & 0xe0 == 0x20) {
                let more = block[0] & 0x1f == 0x1f;
                block = &block[1..];
                if more {
                    let n = block.iter().position(|&b| b & 0x80 == 0)?;
                    block = &block[n + 1..];
                }
            }
            let first = *block.first()?;
            let index = match first {
                b if b & 0x80 != 0 => b & 0x7f,
                b if b & 0x40 != 0 => b & 0x3f,
                b => b & 0x0f,
            };
            return match index {
                1..=7 => Some(true),
                8..=14 => Some(false),
                _ => None,
            };
        }
        at += total as usize;
    }
}

/// Whether `head` is two or more whole frames from its first byte to its
/// last (`len`, all captured): HTTP/2 joined in the middle; `None` for
/// one whole frame (not known yet).
fn frames_from_start(head: &[u8], len: u64) -> Option<bool> {
    let whole = whole_messages(head, len, frame);
    match frame(head) {
        Some((_, first)) if whole && first == len => None,
        _ => Some(whole),
    }
}

/// Whether an HTTP/1.1 request's head asks to upgrade to h2c.
pub(crate) fn asks_to_upgrade(head: &[u8]) -> bool {
    // (Every request's head is asked: most never name h2c.)
    static H2C: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"2c"));
    static UPPER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"2C"));
    (H2C.find(head).is_some() || UPPER.find(head).is_some())
        && crate::websocket::upgrade_offers(head, b"h2c")
}

/// A SETTINGS frame (not an acknowledgment) at the start of `head`: a
/// server's connection preface.
pub(crate) fn is_settings(head: &[u8]) -> bool {
    matches!(frame(head), Some(((SETTINGS, 0, 0, _), _)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bytes` from `dir`, all captured, in the segment of frame `frame`
    /// (a capture from the connection's start; the credit's sides zero).
    fn read_at(h: &mut H2c, dir: Direction, bytes: &[u8], frame: u64) -> Option<Turns> {
        h.read(
            dir,
            bytes,
            bytes.len() as u64,
            false,
            (stamp(frame), stamp(frame)),
            [0, 0],
        )
    }
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn frame_of(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend([kind, flags]);
        f.extend(stream.to_be_bytes());
        f.extend(payload);
        f
    }

    fn headers(stream: u32, end: bool) -> Vec<u8> {
        frame_of(HEADERS, 0x4 | end as u8, stream, &[0x82, 0x86, 0x84])
    }

    fn data(stream: u32, n: usize, end: bool) -> Vec<u8> {
        frame_of(DATA, end as u8, stream, &vec![0u8; n])
    }

    fn settings() -> Vec<u8> {
        frame_of(SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100])
    }

    fn settings_ack() -> Vec<u8> {
        frame_of(SETTINGS, ACK, 0, &[])
    }

    fn window_update(stream: u32) -> Vec<u8> {
        frame_of(WINDOW_UPDATE, 0, stream, &[0, 1, 0, 0])
    }

    fn ping(ack: bool, opaque: u8) -> Vec<u8> {
        frame_of(PING, ack as u8, 0, &[opaque; 8])
    }

    fn preface_and(rest: &[Vec<u8>]) -> Vec<u8> {
        let mut v = PREFACE.to_vec();
        rest.iter().for_each(|f| v.extend(f));
        v
    }

    fn read(h: &mut H2c, dir: Direction, bytes: &[u8]) -> Turns {
        read_at(h, dir, bytes, 0).expect("h2c")
    }

    fn cat(frames: &[Vec<u8>]) -> Vec<u8> {
        frames.concat()
    }

    fn asks(name: &'static str) -> Turns {
        Turns {
            asks: Some(name),
            ..Turns::default()
        }
    }

    fn aside() -> Turns {
        Turns {
            aside: true,
            ..Turns::default()
        }
    }

    fn answers() -> Turns {
        Turns {
            answers: true,
            ..Turns::default()
        }
    }

    fn extends() -> Turns {
        Turns {
            extends: true,
            ..Turns::default()
        }
    }

    #[test]
    fn the_preface_decides_and_a_request_in_it_asks() {
        let mut h = H2c::default();
        let first = preface_and(&[settings(), window_update(0), headers(1, true)]);
        assert_eq!(read(&mut h, C, &first), asks("HEADERS"));
        assert!(h.is());
        // The server's preface and acknowledgment answer nothing; its
        // HEADERS on stream 1 does, its DATA goes on with it.
        assert_eq!(
            read(&mut h, S, &cat(&[settings(), settings_ack()])),
            Turns::default()
        );
        assert_eq!(
            read(&mut h, S, &cat(&[headers(1, false), data(1, 10, false)])),
            answers()
        );
        assert_eq!(read(&mut h, S, &data(1, 10, true)), extends());
        // Ended: more DATA on it is nobody's.
        assert_eq!(read(&mut h, S, &data(1, 10, false)), Turns::default());
    }

    fn stamp(frame: u64) -> Stamp {
        Stamp {
            frame,
            ts_ns: frame as i64 * 1_000_000,
        }
    }

    /// Fields as a browser's or a server's encoder writes them: Huffman
    /// coded, added to the table, and indexed once there.
    fn block(enc: &mut httlib_hpack::Encoder<'_>, fields: &[(&str, &str)]) -> Vec<u8> {
        use httlib_hpack::Encoder;
        let flags = Encoder::HUFFMAN_NAME
            | Encoder::HUFFMAN_VALUE
            | Encoder::WITH_INDEXING
            | Encoder::BEST_FORMAT;
        let mut out = Vec::new();
        for (k, v) in fields {
            let field = (k.as_bytes().to_vec(), v.as_bytes().to_vec(), flags);
            enc.encode(field, &mut out).expect("encodes");
        }
        out
    }

    fn get(enc: &mut httlib_hpack::Encoder<'_>, stream: u32, path: &str) -> Vec<u8> {
        let fields = [
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "example.com"),
            (":path", path),
        ];
        frame_of(HEADERS, 0x5, stream, &block(enc, &fields))
    }

    fn answer_of(
        enc: &mut httlib_hpack::Encoder<'_>,
        stream: u32,
        fields: &[(&str, &str)],
    ) -> Vec<u8> {
        frame_of(HEADERS, 0x4, stream, &block(enc, fields))
    }

    fn asked_for(path: &str) -> crate::redirect::Asked {
        crate::redirect::Asked::of_h2(true, b"example.com", path.as_bytes()).expect("a URL")
    }

    fn retry_for(path: &str, authorization: Option<&str>) -> crate::challenge::Retry {
        let asked = asked_for(path);
        crate::challenge::Retry::of_h2(b"GET", &asked, authorization.map(str::as_bytes), None)
    }

    #[test]
    fn a_challenge_is_noted_with_what_its_request_asked_and_the_answer_with_its_credentials() {
        let (mut client, mut server) = (
            httlib_hpack::Encoder::default(),
            httlib_hpack::Encoder::default(),
        );
        let mut h = H2c::default();
        let first = preface_and(&[settings(), get(&mut client, 1, "/private")]);
        read_at(&mut h, C, &first, 4);
        h.take_follow_up_notes();
        let challenge = [
            (":status", "401"),
            ("www-authenticate", "Basic realm=\"r\""),
        ];
        let answer = answer_of(&mut server, 1, &challenge);
        read_at(&mut h, S, &answer, 6);
        let notes = h.take_follow_up_notes();
        let [FollowUpNote::Challenged {
            challenge,
            retry,
            status: 401,
            request,
            answer,
            ..
        }] = &notes[..]
        else {
            panic!("{notes:?}")
        };
        assert_eq!(challenge.offered, rttdoc_model::AuthScheme::Basic);
        assert!(!challenge.proxy);
        assert_eq!(*retry, retry_for("/private", None));
        assert_eq!((*request, *answer), (stamp(4), stamp(6)));
        // Asked again with credentials: the same request, carrying them.
        let fields = [
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "example.com"),
            (":path", "/private"),
            ("authorization", "Basic dTpw"),
        ];
        let again = frame_of(HEADERS, 0x5, 3, &block(&mut client, &fields));
        read_at(&mut h, C, &again, 8);
        let notes = h.take_follow_up_notes();
        let [FollowUpNote::Opened { retry: Some(r), .. }] = &notes[..] else {
            panic!("{notes:?}")
        };
        assert_eq!(*r, retry_for("/private", Some("Basic dTpw")));
        // A 401 without a challenge asks for nothing a client can answer.
        let bare = answer_of(&mut server, 3, &[(":status", "401")]);
        read_at(&mut h, S, &bare, 9);
        assert!(!h.has_follow_up_notes());
    }

    #[test]
    fn a_redirect_is_noted_with_its_request_and_each_request_with_its_url() {
        let (mut client, mut server) = (
            httlib_hpack::Encoder::default(),
            httlib_hpack::Encoder::default(),
        );
        let mut h = H2c::default();
        let first = preface_and(&[settings(), get(&mut client, 1, "/docs")]);
        read_at(&mut h, C, &first, 4);
        let asked = |at, first| FollowUpNote::Opened {
            asked: asked_for(if first { "/docs" } else { "/docs/" }),
            retry: Some(retry_for(if first { "/docs" } else { "/docs/" }, None)),
            at: stamp(at),
            first,
        };
        assert_eq!(h.take_follow_up_notes(), [asked(4, true)]);
        // The server's preface; a 103's hints, then the 301 (its fields in
        // the server's table: the names of the second block are indexed).
        read(&mut h, S, &settings());
        let hints = [(":status", "103"), ("link", "</s.css>; rel=preload")];
        let moved = [
            (":status", "301"),
            ("location", "https://example.com/docs/"),
        ];
        let answers = cat(&[
            answer_of(&mut server, 1, &hints),
            answer_of(&mut server, 1, &moved),
        ]);
        assert!(!h.has_follow_up_notes());
        read_at(&mut h, S, &answers, 6);
        let [FollowUpNote::Redirected {
            location,
            status: 301,
            request,
            request_label,
            first: true,
            answer,
        }] = &h.take_follow_up_notes()[..]
        else {
            panic!("one redirect noted")
        };
        assert_eq!(&*location.text, "https://example.com/docs/");
        assert!(location.same_origin && !location.to_https);
        assert_eq!((*request, *answer), (stamp(4), stamp(6)));
        assert_eq!(request_label.as_deref(), Some("GET /docs"));
        // The follow-up, with the client's table in step; its answer (a
        // 200, and a redirect's again with a relative Location) after a
        // PUSH_PROMISE whose fields went into the server's table.
        let follow = get(&mut client, 3, "/docs/");
        read_at(&mut h, C, &follow, 8);
        assert_eq!(h.take_follow_up_notes(), [asked(8, false)]);
        // (GET, :path /, and `location: c` added to the table: literal
        // with incremental indexing, name 46.)
        let mut promise = vec![0, 0, 0, 2, 0x82, 0x84, 0x6e, 1];
        promise.push(b'c');
        let pushed = frame_of(PUSH_PROMISE, 0x4, 3, &promise);
        let ok = answer_of(&mut server, 3, &[(":status", "200")]);
        let pushed_and_ok = cat(&[pushed, ok]);
        read_at(&mut h, S, &pushed_and_ok, 9);
        let both = cat(&[get(&mut client, 5, "/a"), get(&mut client, 7, "/b")]);
        read_at(&mut h, C, &both, 10);
        assert_eq!(h.take_follow_up_notes().len(), 2, "each request of a turn");
        // `:status 302` (a literal, name 8), then index 62: the
        // promise's `location`.
        let found = frame_of(HEADERS, 0x4, 7, &[0x08, 3, b'3', b'0', b'2', 0xbe]);
        read_at(&mut h, S, &found, 11);
        let notes = h.take_follow_up_notes();
        let [FollowUpNote::Redirected {
            location, request, ..
        }] = &notes[..]
        else {
            panic!("{notes:?}")
        };
        assert_eq!((&*location.text, *request), ("c", stamp(10)));
        // A 200 settles its request: nothing noted.
        let fine = answer_of(&mut server, 5, &[(":status", "200")]);
        read_at(&mut h, S, &fine, 12);
        assert!(!h.has_follow_up_notes());
    }

    #[test]
    fn a_lost_header_block_of_the_servers_ends_the_reading_of_its_answers() {
        let (mut client, mut server) = (
            httlib_hpack::Encoder::default(),
            httlib_hpack::Encoder::default(),
        );
        let mut h = H2c::default();
        let first = preface_and(&[settings(), get(&mut client, 1, "/docs")]);
        read_at(&mut h, C, &first, 1);
        // The server's first block lost: its table is out of step.
        let lost = answer_of(&mut server, 1, &[(":status", "200"), ("x-a", "1")]);
        h.read(
            S,
            &[],
            lost.len() as u64,
            false,
            (stamp(2), stamp(2)),
            [0, 0],
        );
        h.take_follow_up_notes();
        let next = get(&mut client, 3, "/docs");
        read_at(&mut h, C, &next, 3);
        // (The request may still follow another's redirect.)
        let notes = h.take_follow_up_notes();
        assert!(
            matches!(notes[..], [FollowUpNote::Opened { .. }]),
            "{notes:?}"
        );
        let moved = answer_of(
            &mut server,
            3,
            &[(":status", "301"), ("location", "/docs/")],
        );
        read_at(&mut h, S, &moved, 4);
        assert!(!h.has_follow_up_notes(), "its answer unread: no redirect");
    }

    #[test]
    fn requests_are_named_by_method_and_path_with_hpacks_table_in_step() {
        let mut h = H2c::default();
        // GET (static 2), http (6), :path / (static 4).
        read(&mut h, C, &preface_and(&[settings(), headers(1, true)]));
        assert_eq!(h.take_name().as_deref(), Some("GET /"));
        // POST (3), a literal :path (name 4) added to the dynamic table.
        let mut literal = vec![0x83, 0x86, 0x44, 4];
        literal.extend(b"/a/b");
        let block = frame_of(HEADERS, 0x5, 3, &literal);
        assert_eq!(read(&mut h, C, &block), asks("HEADERS"));
        assert_eq!(h.take_name().as_deref(), Some("POST /a/b"));
        // The name is the turn's once: taken, it is gone.
        assert_eq!(h.take_name(), None);
        // Index 62: the newest entry of the dynamic table.
        let again = frame_of(HEADERS, 0x5, 5, &[0x82, 0x86, 0xbe]);
        read(&mut h, C, &again);
        assert_eq!(h.take_name().as_deref(), Some("GET /a/b"));
        // A header block split across a HEADERS and a CONTINUATION frame.
        let first = frame_of(HEADERS, 0x1, 7, &[0x82, 0x86]);
        let rest = frame_of(CONTINUATION, 0x4, 7, &[0xbe]);
        assert_eq!(read(&mut h, C, &cat(&[first, rest])).asks, Some("HEADERS"));
        assert_eq!(h.take_name().as_deref(), Some("GET /a/b"));
        // A block the capture lost: the table is out of step, no names
        // from then on; the requests still ask.
        assert_eq!(
            h.read(
                C,
                &[],
                40,
                false,
                (Stamp::default(), Stamp::default()),
                [0, 0]
            ),
            Some(aside())
        );
        read(&mut h, C, &headers(11, true));
        assert_eq!(read(&mut h, C, &headers(13, true)), asks("HEADERS"));
        assert_eq!(h.take_name(), None);
    }

    #[test]
    fn the_preface_alone_asks_nothing() {
        let mut h = H2c::default();
        assert_eq!(read(&mut h, C, &preface_and(&[settings()])), aside());
        assert_eq!(read(&mut h, C, &headers(1, true)), asks("HEADERS"));
    }

    #[test]
    fn flow_control_and_acknowledgments_are_beside_the_turns() {
        let mut h = H2c::default();
        read(&mut h, C, &preface_and(&[settings(), headers(1, true)]));
        assert_eq!(read(&mut h, S, &headers(1, false)), answers());
        // The client acknowledging data while the answer streams in: no
        // question, no end of the turn; the next message goes on with
        // the answer.
        assert_eq!(
            read(&mut h, C, &cat(&[window_update(0), window_update(1)])),
            aside()
        );
        assert_eq!(read(&mut h, C, &settings_ack()), aside());
        assert_eq!(read(&mut h, S, &data(1, 100, false)), extends());
        // The server's own PING answers nothing; the client's
        // acknowledgment asks nothing.
        assert_eq!(read(&mut h, S, &ping(false, 7)), Turns::default());
        assert_eq!(read(&mut h, C, &ping(true, 7)), aside());
        assert_eq!(read(&mut h, S, &data(1, 100, true)), extends());
    }

    #[test]
    fn a_ping_and_its_acknowledgment_are_beside_the_turns() {
        let mut h = H2c::default();
        read(&mut h, C, &preface_and(&[settings()]));
        // grpc's PING just before a request: the request's turn, which the
        // PING's acknowledgment does not answer.
        assert_eq!(read(&mut h, C, &ping(false, 1)), aside());
        assert_eq!(read(&mut h, C, &headers(3, true)), asks("HEADERS"));
        assert_eq!(
            read(&mut h, S, &cat(&[ping(true, 1), window_update(0)])),
            Turns::default()
        );
        assert_eq!(read(&mut h, S, &ping(false, 2)), Turns::default());
        assert_eq!(read(&mut h, S, &headers(3, true)), answers());
    }

    #[test]
    fn a_request_body_goes_on_with_its_request_and_its_window_updates_answer_nothing() {
        let mut h = H2c::default();
        read(&mut h, C, &preface_and(&[settings()]));
        assert_eq!(
            read(&mut h, C, &cat(&[headers(1, false), data(1, 100, false)])),
            Turns {
                asks: Some("HEADERS"),
                continues: true,
                ..Turns::default()
            }
        );
        assert_eq!(read(&mut h, S, &window_update(1)), Turns::default());
        assert_eq!(
            read(&mut h, C, &data(1, 100, true)),
            Turns {
                continues: true,
                ..Turns::default()
            }
        );
        assert_eq!(read(&mut h, S, &headers(1, true)), answers());
    }

    #[test]
    fn a_frame_across_segments_goes_on_with_what_it_began() {
        let mut h = H2c::default();
        read(&mut h, C, &preface_and(&[settings(), headers(1, true)]));
        // A 3000-byte DATA frame of the answer, cut after 1000 bytes.
        let answer = cat(&[headers(1, false), data(1, 3000, true)]);
        let (a, b) = answer.split_at(1000);
        assert_eq!(read(&mut h, S, a), answers());
        assert_eq!(read(&mut h, S, b), extends());
        // A request's DATA cut likewise.
        let request = cat(&[headers(3, false), data(3, 3000, true)]);
        let (a, b) = request.split_at(1000);
        assert_eq!(read(&mut h, C, a).asks, Some("HEADERS"));
        assert_eq!(
            read(&mut h, C, b),
            Turns {
                continues: true,
                ..Turns::default()
            }
        );
    }

    #[test]
    fn requests_sent_together_are_one_turn_and_a_late_answer_of_an_earlier_turn_answers_nothing() {
        let mut h = H2c::default();
        read(&mut h, C, &preface_and(&[settings()]));
        assert_eq!(read(&mut h, C, &headers(1, true)), asks("HEADERS"));
        assert_eq!(read(&mut h, C, &headers(3, true)), asks("HEADERS"));
        // Stream 3's answer comes first and answers the turn; stream 1's
        // goes on with it.
        assert_eq!(read(&mut h, S, &headers(3, true)), answers());
        assert_eq!(read(&mut h, S, &headers(1, false)), answers());
        assert_eq!(read(&mut h, S, &data(1, 10, true)), extends());
        // A new turn; stream 5's answer still awaited when stream 7 asks.
        assert_eq!(read(&mut h, C, &headers(5, true)), asks("HEADERS"));
        assert_eq!(read(&mut h, S, &headers(5, false)), answers());
        assert_eq!(read(&mut h, C, &headers(7, true)), asks("HEADERS"));
        // Stream 5's DATA belongs to the turn before: nobody's now.
        assert_eq!(read(&mut h, S, &data(5, 10, true)), Turns::default());
        assert_eq!(read(&mut h, S, &headers(7, true)), answers());
    }

    #[test]
    fn a_refused_or_withdrawn_request() {
        let mut h = H2c::default();
        read(&mut h, C, &preface_and(&[settings(), headers(1, true)]));
        // The server refuses it (REFUSED_STREAM): an answer.
        let refused = frame_of(RST_STREAM, 0, 1, &[0, 0, 0, 7]);
        assert_eq!(read(&mut h, S, &refused), answers());
        // The client cancels stream 3: its late HEADERS answers nothing.
        assert_eq!(read(&mut h, C, &headers(3, true)), asks("HEADERS"));
        let cancel = frame_of(RST_STREAM, 0, 3, &[0, 0, 0, 8]);
        assert_eq!(read(&mut h, C, &cancel), aside());
        assert_eq!(read(&mut h, S, &headers(3, true)), Turns::default());
    }

    #[test]
    fn a_server_that_sends_its_settings_first_decides_too() {
        let mut h = H2c::default();
        assert_eq!(read(&mut h, S, &settings()), Turns::default());
        assert!(h.is());
        assert_eq!(
            read(&mut h, C, &preface_and(&[settings(), headers(1, true)])),
            asks("HEADERS")
        );
    }

    #[test]
    fn a_capture_begun_mid_connection_joins_on_whole_frames() {
        // The server's answer to a request the capture missed, then a
        // request and its answer: joined, unnamed.
        let mut h = H2c::default();
        let answer = cat(&[headers(1, false), data(1, 10, true)]);
        assert_eq!(
            h.read(
                S,
                &answer,
                answer.len() as u64,
                true,
                (Stamp::default(), Stamp::default()),
                [0, 0]
            ),
            Some(Turns::default())
        );
        assert!(h.is());
        assert_eq!(read(&mut h, C, &headers(3, true)), asks("HEADERS"));
        assert_eq!(h.take_name(), None);
        assert_eq!(read(&mut h, S, &headers(3, true)), answers());
        // One frame alone tells nothing yet; the next segment does.
        let mut h = H2c::default();
        let lone = window_update(0);
        assert_eq!(
            h.read(
                C,
                &lone,
                lone.len() as u64,
                true,
                (Stamp::default(), Stamp::default()),
                [0, 0]
            ),
            None
        );
        assert!(h.undecided());
        let two = cat(&[window_update(0), ping(false, 1)]);
        assert_eq!(
            h.read(
                C,
                &two,
                two.len() as u64,
                true,
                (Stamp::default(), Stamp::default()),
                [0, 0]
            ),
            Some(aside())
        );
        assert!(h.is());
        // Bytes that are no frames: not joined; nor whole frames when the
        // capture saw the handshake.
        for (first, mid_stream) in [
            (b"GET / HTTP/1.1\r\n\r\n".to_vec(), true),
            (cat(&[window_update(0), ping(false, 1)]), false),
        ] {
            let mut h = H2c::default();
            assert_eq!(
                h.read(
                    C,
                    &first,
                    first.len() as u64,
                    mid_stream,
                    (Stamp::default(), Stamp::default()),
                    [0, 0]
                ),
                None
            );
            assert!(h.is_not());
        }
    }

    #[test]
    fn the_speaker_of_a_request_or_an_answer() {
        let request = cat(&[window_update(0), headers(3, true)]);
        assert_eq!(speaker(&request), Some(true));
        assert_eq!(speaker(&preface_and(&[])), Some(true));
        // :status 200 (static 8) after a table size update, or as a
        // literal's name.
        assert_eq!(
            speaker(&frame_of(HEADERS, 4, 1, &[0x3f, 0xe1, 0x1f, 0x88])),
            Some(false)
        );
        assert_eq!(
            speaker(&frame_of(HEADERS, 4, 1, &[0x08, 3, b'2', b'0', b'4'])),
            Some(false)
        );
        // Trailers (grpc-status, a literal name), no HEADERS, a HEADERS the
        // payload cut, bytes that are no frames: not told.
        assert_eq!(speaker(&frame_of(HEADERS, 5, 1, &[0x40, 11])), None);
        assert_eq!(speaker(&window_update(0)), None);
        assert_eq!(speaker(&headers(1, true)[..10]), None);
        assert_eq!(speaker(b"SSH-2.0-OpenSSH_9.2\r\n"), None);
    }

    #[test]
    fn other_first_data_is_not_h2c() {
        for (dir, first) in [
            (C, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n".to_vec()),
            (C, b"PRI * HTTP/1.1\r\n".to_vec()),
            (S, b"220 mail.example ESMTP\r\n".to_vec()),
            // A SETTINGS acknowledgment is no preface; a SETTINGS frame
            // on a stream is none of HTTP/2's.
            (S, settings_ack()),
            (S, frame_of(SETTINGS, 0, 1, &[0, 3, 0, 0, 0, 100])),
        ] {
            let mut h = H2c::default();
            assert_eq!(
                h.read(
                    dir,
                    &first,
                    first.len() as u64,
                    false,
                    (Stamp::default(), Stamp::default()),
                    [0, 0]
                ),
                None
            );
            assert!(h.is_not());
        }
    }

    #[test]
    fn a_hole_loses_the_frames_until_a_segment_is_whole_frames() {
        let mut h = H2c::default();
        read(&mut h, C, &preface_and(&[settings(), headers(1, true)]));
        // 500 bytes the capture missed.
        assert_eq!(
            h.read(
                S,
                &[],
                500,
                false,
                (Stamp::default(), Stamp::default()),
                [0, 0]
            ),
            Some(Turns::default())
        );
        // Bytes that do not start a frame: lost still.
        assert_eq!(read(&mut h, S, &[0xff; 20]), Turns::default());
        // Whole frames again: the answer.
        assert_eq!(read(&mut h, S, &headers(1, true)), answers());
    }

    proptest::proptest! {
        /// Whatever bytes either side sends, the reading never panics
        /// and never both asks and answers in one segment of one side.
        #[test]
        fn any_bytes_are_read_without_panic(segments in crate::reader::any::segments()) {
            let mut h = H2c::default();
            let first = preface_and(&[settings()]);
            h.read(C, &first, first.len() as u64, false, (Stamp::default(), Stamp::default()), [0, 0]);
            crate::reader::any::feed(segments, |dir, bytes, len| {
                if let Some(m) = h.read(dir, bytes, len, false, (Stamp::default(), Stamp::default()), [0, 0]) {
                    assert!(!(m.asks.is_some() && m.answers));
                }
            });
        }
    }
}
