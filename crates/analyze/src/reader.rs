//! What the protocol readers (mqtt.rs, postgres.rs, amqp.rs, irc.rs)
//! share: a decision on the connection's first data, and the reading's
//! state only once the connection is found to speak the protocol (every
//! connection carries one of each reader; most never speak any of them).

/// One connection's reading of one protocol, whose state is `S`.
#[derive(Debug, Clone, Default)]
pub struct Reading<S> {
    /// Decided: the protocol's or not (undecided while what came says
    /// neither: a server's greeting before the client's first words).
    is: Option<bool>,
    /// The server listens on the protocol's port (for the readers that go
    /// by it; set with the roles, and again if they are swapped before
    /// the first payload).
    pub(crate) port: bool,
    /// The reading, once the connection is the protocol's.
    state: Option<Box<S>>,
}

impl<S: Default> Reading<S> {
    /// Decided: the protocol's (`Some(true)`), not, or not known yet.
    pub(crate) fn decided(&self) -> Option<bool> {
        self.is
    }

    /// Whether the connection was found to carry the protocol.
    #[cfg(test)]
    pub(crate) fn is(&self) -> bool {
        self.is == Some(true)
    }

    /// Whether the connection was found not to carry the protocol (or no
    /// longer: what follows is not read).
    #[cfg(test)]
    pub(crate) fn is_not(&self) -> bool {
        self.is == Some(false)
    }

    /// Whether nothing was decided yet.
    pub(crate) fn undecided(&self) -> bool {
        self.is.is_none()
    }

    /// The state to read a segment with: `decide` says, while nothing is
    /// decided, whether the connection is the protocol's (`None`: not
    /// known yet); `None` when it is not.
    pub(crate) fn state(&mut self, decide: impl FnOnce() -> Option<bool>) -> Option<&mut S> {
        if self.is.is_none() {
            self.is = decide();
        }
        if self.is != Some(true) {
            return None;
        }
        Some(self.state.get_or_insert_default())
    }

    /// The state to read a segment with, for a protocol whose client
    /// speaks first: server data before any of the client's says the
    /// connection is not the protocol's, unless the capture began on it
    /// (`mid_stream`: then the client's next data decides); the client's
    /// data is decided by `client_decides`. `None` when it is not the
    /// protocol's.
    pub(crate) fn client_first(
        &mut self,
        dir: crate::Direction,
        mid_stream: bool,
        client_decides: impl FnOnce() -> bool,
    ) -> Option<&mut S> {
        self.state(|| match dir {
            crate::Direction::ServerToClient => (!mid_stream).then_some(false),
            crate::Direction::ClientToServer => Some(client_decides()),
        })
    }

    /// A reading of a connection whose server listens on the protocol's
    /// port.
    #[cfg(test)]
    pub(crate) fn on_its_port() -> Reading<S> {
        Reading {
            port: true,
            ..Reading::default()
        }
    }

    /// Starts reading the protocol from here on, whatever was decided
    /// (an HTTP/1.1 connection upgraded to it): its state, fresh.
    pub(crate) fn begin(&mut self) -> &mut S {
        self.is = Some(true);
        self.state.insert(Box::default())
    }

    /// Stops reading: what follows is not the protocol's (TLS, once a
    /// PostgreSQL server accepted the client's SSLRequest).
    pub(crate) fn stop(&mut self) {
        self.is = Some(false);
        self.state = None;
    }
}

/// Which of the client's numbered questions began its latest turn, as
/// exchange.rs makes turns (the client's next question after an answer
/// begins one): an answer to an older question (a producer's requests in
/// flight, a fetch's expiry after the client asked again) is the rest of
/// the turn before, not this one's answer (kafka.rs, nats.rs).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TurnNumbers {
    /// Questions asked so far.
    asked: u64,
    /// The number of the question that began the latest turn.
    turn_began: u64,
    /// An answer came since the client last asked.
    answered_since_asked: bool,
}

impl TurnNumbers {
    /// Numbers the client's next question; `begins`: it begins a turn
    /// whatever came before (nothing was awaited, the client gave an
    /// older question up).
    pub(crate) fn ask(&mut self, begins: bool) -> u64 {
        self.asked += 1;
        if begins || self.answered_since_asked {
            self.turn_began = self.asked;
            self.answered_since_asked = false;
        }
        self.asked
    }

    /// An answer to question `number`: whether it is of the latest turn.
    pub(crate) fn answer(&mut self, number: u64) -> bool {
        self.answered_since_asked = true;
        number >= self.turn_began
    }
}

/// Adds `item` to a reader's list of what it awaits, which keeps the
/// newest `max`: a forgotten question only leaves its turn unanswered.
pub(crate) fn push_bounded<T>(list: &mut Vec<T>, item: T, max: usize) {
    if list.len() == max {
        list.remove(0);
    }
    list.push(item);
}

/// For the readers' property tests: any segments of either side.
#[cfg(test)]
pub(crate) mod any {
    use crate::Direction;
    use proptest::prelude::*;

    /// Segments: which side sent each, its captured bytes, and how many
    /// more the capture missed.
    pub(crate) fn segments() -> impl Strategy<Value = Vec<(bool, Vec<u8>, u64)>> {
        proptest::collection::vec(
            (
                any::<bool>(),
                proptest::collection::vec(any::<u8>(), 0..64),
                0u64..200,
            ),
            1..12,
        )
    }

    /// Hands each segment to `read` as a connection would: its side, its
    /// captured bytes, its length in all.
    pub(crate) fn feed(
        segments: Vec<(bool, Vec<u8>, u64)>,
        mut read: impl FnMut(Direction, &[u8], u64),
    ) {
        for (client, bytes, missing) in segments {
            let dir = if client {
                Direction::ClientToServer
            } else {
                Direction::ServerToClient
            };
            read(dir, &bytes, bytes.len() as u64 + missing);
        }
    }
}
