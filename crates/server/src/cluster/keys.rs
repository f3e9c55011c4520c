//! The names of the Redis keys of a cluster, all under one prefix (`volley:` unless
//! `--redis-prefix` says otherwise), so that several clusters may share a Redis.

use crate::clock::now_ms;

#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str) -> Self {
        Self { prefix: prefix.to_owned() }
    }

    /// The stream of every observer event.
    pub(crate) fn events(&self) -> String {
        format!("{}events", self.prefix)
    }

    /// The instances that have observers, scored by when that stops being true.
    pub(crate) fn listeners(&self) -> String {
        format!("{}listeners", self.prefix)
    }

    /// An instance's liveness key (expires when it stops refreshing it).
    pub(crate) fn instance(&self, id: &str) -> String {
        format!("{}instance:{id}", self.prefix)
    }

    /// The live sessions, scored by last use.
    pub(crate) fn sessions(&self) -> String {
        format!("{}sessions", self.prefix)
    }

    /// A session's variables, cookies and versions.
    pub(crate) fn session(&self, id: &str) -> String {
        format!("{}session:{id}", self.prefix)
    }

    /// The responses of a session's named requests, kept for chaining, by name.
    pub(crate) fn session_responses(&self, id: &str) -> String {
        format!("{}session:{id}:responses", self.prefix)
    }

    /// The lock of a session's turn (its executions run one at a time cluster-wide).
    pub(crate) fn session_lock(&self, id: &str) -> String {
        format!("{}session:{id}:lock", self.prefix)
    }

    /// The live flows, scored by last use.
    pub(crate) fn flows(&self) -> String {
        format!("{}flows", self.prefix)
    }

    /// A flow's fields and counts (`flow:{id}`; its executions, their order, its
    /// events and its `seq` are `flow:{id}:executions`, `:order`, `:events`, `:seq`).
    pub(crate) fn flow(&self, id: &str) -> String {
        format!("{}flow:{id}", self.prefix)
    }

    pub(crate) fn flow_part(&self, id: &str, part: &str) -> String {
        format!("{}flow:{id}:{part}", self.prefix)
    }

    /// A live scoped token (deleted when revoked, expires with the token).
    pub(crate) fn token(&self, jti: &str) -> String {
        format!("{}token:{jti}", self.prefix)
    }

    /// A WebSocket session's fields (`ws:{id}`), envelopes (`ws:{id}:envelopes`) and
    /// commands to its owner (`ws:{id}:commands`).
    pub(crate) fn ws(&self, id: &str) -> String {
        format!("{}ws:{id}", self.prefix)
    }

    pub(crate) fn ws_part(&self, id: &str, part: &str) -> String {
        format!("{}ws:{id}:{part}", self.prefix)
    }

    /// The commands other instances send to the WebSocket sessions `instance` owns.
    pub(crate) fn commands(&self, instance: &str) -> String {
        format!("{}instance:{instance}:commands", self.prefix)
    }

    /// Marks `instance` as having observers for the next few seconds.
    pub(crate) fn listener_entry(&self, instance: &str) -> redis::Cmd {
        let mut command = redis::cmd("ZADD");
        command.arg(self.listeners()).arg("GT").arg(now_ms() + super::ALIVE_FOR.as_millis() as u64).arg(instance);
        command
    }

    /// The heartbeat of `instance`: alive for a few seconds more, listed as a listener
    /// when `listening`; answers how many instances have observers.
    pub(crate) fn heartbeat(&self, instance: &str, listening: bool) -> redis::ScriptInvocation<'static> {
        let mut invocation = super::scripts::HEARTBEAT.prepare_invoke();
        invocation
            .key(self.instance(instance))
            .key(self.listeners())
            .arg(instance)
            .arg(super::ALIVE_FOR.as_millis() as u64)
            .arg(now_ms())
            .arg(u8::from(listening));
        invocation
    }
}
