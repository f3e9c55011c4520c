//! The share of the connection cap one client address may hold, and the refusal of a
//! connection beyond it.
//!
//! The global cap makes extra connections wait in the listen backlog; a client beyond
//! its share cannot wait there, since the backlog is one queue in order: its connection
//! would stand in front of everyone else's. Nor can it hold a slot of the cap while it
//! waits, or one client's flood of silent connections would fill the cap again. So it
//! is refused at once, without a slot: answered `429 Too Many Requests` with
//! `Retry-After: 1` and `Connection: close`, written before its request is read (as the
//! early 413 is) and followed by a lingering close, so that the answer is not destroyed
//! by a reset. 429 rather than 503: the limit is this client's own, as the session
//! limits are, and the server serves everyone else meanwhile; a 503 would tell a load
//! balancer or a monitor that the whole server is unavailable. At most as many refusals
//! as the cap linger at once; beyond that a refused connection is closed without a word.
//!
//! IPv4-mapped IPv6 addresses count as their IPv4 address, and an IPv6 address as its
//! /64 network (what one host is usually given).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{answers, socket};

/// How many connections each client address holds.
#[derive(Debug)]
pub(super) struct Clients {
    share: usize,
    held: Mutex<HashMap<IpAddr, usize>>,
    /// The refusals that may linger at once.
    refusals: Arc<Semaphore>,
}

impl Clients {
    pub(super) fn new(share: usize, max_connections: usize) -> Arc<Self> {
        let lingering = max_connections.clamp(1, Semaphore::MAX_PERMITS);
        Arc::new(Self { share: share.max(1), held: Mutex::default(), refusals: Arc::new(Semaphore::new(lingering)) })
    }

    /// A connection from `address` takes a part of its share, if some is left.
    pub(super) fn admit(self: &Arc<Self>, address: IpAddr) -> Option<ClientShare> {
        let address = client(address);
        let mut held = self.held.lock();
        let count = held.entry(address).or_insert(0);
        if *count >= self.share {
            return None;
        }
        *count += 1;
        Some(ClientShare { clients: Arc::clone(self), address })
    }

    /// Refuses a connection beyond its address's share (see the module documentation).
    pub(super) fn refuse(&self, mut stream: TcpStream, write_timeout: Duration) {
        tracing::debug!("refusing a connection: its address holds its share of the connections");
        let Ok(refusal) = Arc::clone(&self.refusals).try_acquire_owned() else {
            return;
        };
        let answer = answers::too_many_connections(self.share);
        tokio::spawn(async move {
            let _refusal: OwnedSemaphorePermit = refusal;
            let written = tokio::time::timeout(write_timeout, stream.write_all(&answer)).await;
            if matches!(written, Ok(Ok(()))) {
                socket::linger(stream, None).await;
            }
        });
    }
}

/// The part of its address's share a connection holds, given back when dropped.
#[derive(Debug)]
pub(super) struct ClientShare {
    clients: Arc<Clients>,
    address: IpAddr,
}

impl Drop for ClientShare {
    fn drop(&mut self) {
        let mut held = self.clients.held.lock();
        if let Some(count) = held.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.address);
            }
        }
    }
}

/// The address a client is counted under.
fn client(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V6(address) => {
            let network = u128::from(address) & !u128::from(u64::MAX);
            IpAddr::V6(Ipv6Addr::from(network))
        }
        address @ IpAddr::V4(_) => address,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_at_most_its_share() {
        let clients = Clients::new(2, 8);
        let local: IpAddr = "127.0.0.1".parse().expect("an address");
        let first = clients.admit(local).expect("within the share");
        let _second = clients.admit(local).expect("within the share");
        assert!(clients.admit(local).is_none(), "beyond the share");
        assert!(clients.admit("127.0.0.2".parse().expect("an address")).is_some(), "another address");
        drop(first);
        assert!(clients.admit(local).is_some(), "a part given back");
    }

    #[test]
    fn addresses_are_counted_by_host() {
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().expect("an address");
        assert_eq!(client(mapped), "10.0.0.1".parse::<IpAddr>().expect("an address"));
        let one: IpAddr = "2001:db8:1:2:aaaa::1".parse().expect("an address");
        let other: IpAddr = "2001:db8:1:2:bbbb::9".parse().expect("an address");
        assert_eq!(client(one), client(other), "one /64");
        assert_ne!(client(one), client("2001:db8:1:3::1".parse().expect("an address")));
    }
}
