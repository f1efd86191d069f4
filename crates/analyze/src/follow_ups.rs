//! Answers that send their client to ask again, kept for the request
//! that does: a redirect's (redirect.rs), an authentication challenge's
//! (challenge.rs).
//!
//! A client that reads such an answer asks again at once (a browser,
//! curl, every HTTP library), on the connection it has or on another: the
//! answer is kept under the client's address, and each of that client's
//! later requests is compared with its answers only. Bounded: the answers
//! of the last [`WINDOW_NS`] of capture time, at most [`PER_CLIENT`] per
//! client and [`KEPT`] in all (a busy server's capture, thousands of
//! clients a second, keeps its last seconds); none is looked at while
//! none is kept.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// How long after the answer a request may begin (the follow-up
/// connection's name lookup or SYN, or the request on a connection
/// already open) to be following it: a client's turnaround when it has
/// read a status line is milliseconds; a name lookup that lost a query
/// resends it after 1 s (glibc's first timeout is 5 s, but then the user
/// has waited for the resolver, which dns_query_lost names). Later, a
/// request for the same URL is somebody's next visit (or a person who
/// typed a password).
pub const FOLLOW_NS: i64 = 2_000_000_000;

/// How long an answer is kept for its follow-up: [`FOLLOW_NS`] and the
/// longest a capture shows the follow-up after it (a proxy's vantage).
pub(crate) const WINDOW_NS: i64 = 10_000_000_000;

/// Answers kept at most, over all clients.
pub(crate) const KEPT: usize = 16_384;

/// Answers kept per client: a page's few redirects, a loop's.
pub(crate) const PER_CLIENT: usize = 16;

/// An answer kept for its follow-up: when it came.
pub(crate) trait Answer {
    /// Its first segment's capture time.
    fn answered_ns(&self) -> i64;
}

/// The answers seen lately that no request has followed yet, per client.
pub(crate) struct FollowUps<T> {
    /// Per client, its answers in the order they came, at most
    /// [`PER_CLIENT`].
    by_client: FxHashMap<IpAddr, VecDeque<T>>,
    /// (answer time, client) of each answer kept, in the order they
    /// came: what leaves first, by age or past [`KEPT`]. (One that was
    /// followed, or pushed out by its client's newer ones, finds nothing
    /// when its turn comes.)
    order: VecDeque<(i64, IpAddr)>,
}

impl<T> Default for FollowUps<T> {
    fn default() -> Self {
        FollowUps {
            by_client: FxHashMap::default(),
            order: VecDeque::new(),
        }
    }
}

impl<T: Answer> FollowUps<T> {
    /// An answer reached `client`: kept, the oldest leaving by age or
    /// count.
    pub fn keep(&mut self, client: IpAddr, answer: T) {
        let now = answer.answered_ns();
        while let Some(&(at, whose)) = self.order.front() {
            if now.saturating_sub(at) <= WINDOW_NS && self.order.len() < KEPT {
                break;
            }
            self.order.pop_front();
            self.forget_until(whose, at);
        }
        let list = self.by_client.entry(client).or_default();
        if list.len() == PER_CLIENT {
            list.pop_front();
        }
        list.push_back(answer);
        self.order.push_back((now, client));
    }

    /// Drops `client`'s answers that came at `at` or before.
    fn forget_until(&mut self, client: IpAddr, at: i64) {
        if let Some(list) = self.by_client.get_mut(&client) {
            while list.front().is_some_and(|k| k.answered_ns() <= at) {
                list.pop_front();
            }
            if list.is_empty() {
                self.by_client.remove(&client);
            }
        }
    }

    /// Whether any answer waits for its follow-up (a request need not be
    /// looked at otherwise).
    pub fn is_empty(&self) -> bool {
        self.by_client.is_empty()
    }

    /// `client`'s newest answer that `follows` (one it is followed by):
    /// taken, so that each is followed once.
    pub fn take_newest(&mut self, client: IpAddr, follows: impl Fn(&T) -> bool) -> Option<T> {
        let list = self.by_client.get_mut(&client)?;
        let at = list.iter().rposition(follows)?;
        let kept = list.remove(at);
        if list.is_empty() {
            self.by_client.remove(&client);
        }
        kept
    }

    /// How many of `client`'s kept answers `matches`.
    pub fn count(&self, client: IpAddr, matches: impl Fn(&T) -> bool) -> usize {
        self.by_client
            .get(&client)
            .map_or(0, |list| list.iter().filter(|k| matches(k)).count())
    }

    /// How many of `client`'s answers are kept.
    #[cfg(test)]
    pub fn kept_for(&self, client: IpAddr) -> usize {
        self.by_client.get(&client).map_or(0, VecDeque::len)
    }
}
