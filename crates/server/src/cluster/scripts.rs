//! The Lua scripts that make each shared change atomic in Redis. Keys of a flow's
//! parts are named from its key inside the scripts (`<flow key>:events`, …): the
//! cluster runs on one Redis, not on Redis Cluster.

use std::sync::LazyLock;

use redis::Script;

/// KEYS: instance key, listeners. ARGV: instance, alive ms, now, listening (0/1).
/// Answers how many instances have observers. An instance without observers is not
/// taken off the listeners: its entry runs out (an observer that subscribed while the
/// heartbeat was on its way must not be unlisted by it).
pub(crate) static HEARTBEAT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[2], 'GT', tonumber(ARGV[3]) + tonumber(ARGV[2]), ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
return redis.call('ZCARD', KEYS[2])
",
    )
});

/// Publishes observer events, as many as the write queue holds in a row. KEYS: the
/// stream of every event, the listeners. ARGV: a flow's lifetime (ms), events kept per
/// flow, events kept in all, now (ms); then ten per event: the flow, its stream, its
/// `seq` counter (three '' outside a flow), the envelope's text before and after its
/// `seq` (the whole envelope and '' when the `seq` is given), the `seq` ('' to take
/// the flow's next, put between them), kind, session, flow, run. A flow's stream is
/// written only while the flow exists; an event outside a flow only while some
/// instance has observers (asked here, not of the instance, so that an observer that
/// subscribed on another instance a moment ago misses nothing). The counter and the
/// stream get the flow's lifetime when they are made (its first event); using the
/// flow extends every part (`FLOW_GET`).
pub(crate) const PUBLISH: &str = r"
local ttl, per_flow, kept, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local live = {}
local heard = nil
for a = 5, #ARGV, 10 do
  local flow, stream, counter = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  local seq = ARGV[a + 5]
  local first = false
  local json = ARGV[a + 3] .. ARGV[a + 4]
  if seq == '' then
    local next = redis.call('INCR', counter)
    first = next == 1
    if first then redis.call('PEXPIRE', counter, ttl) end
    seq = tostring(next)
    json = ARGV[a + 3] .. seq .. ARGV[a + 4]
  end
  if flow ~= '' then
    if live[flow] == nil then live[flow] = redis.call('EXISTS', flow) == 1 end
    if live[flow] then
      redis.call('XADD', stream, 'MAXLEN', per_flow, '*', 'k', ARGV[a + 6], 's', ARGV[a + 7], 'f', ARGV[a + 8], 'r', ARGV[a + 9], 'q', seq, 'j', json)
      if first then redis.call('PEXPIRE', stream, ttl) end
    end
  end
  if flow == '' and heard == nil then heard = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') > 0 end
  if flow ~= '' or heard then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', kept, '*', 'k', ARGV[a + 6], 's', ARGV[a + 7], 'f', ARGV[a + 8], 'r', ARGV[a + 9], 'q', seq, 'j', json)
  end
end
return 1
";

/// KEYS: sessions, the session. ARGV: id, now, lifetime (ms), cap, variables, cookies.
/// Answers 1, or 0 at the cap.
pub(crate) static SESSION_CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], 'createdAt', ARGV[2], 'lastUsed', ARGV[2], 'version', 1, 'chain', 0, 'variables', ARGV[5], 'cookies', ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
",
    )
});

/// KEYS: sessions, the session, its chained responses. ARGV: id, now, lifetime (ms),
/// touch (0/1), the version the caller holds. Answers the session's fields as
/// HGETALL does (its variables and cookies only when their version is another), or
/// nil when it is gone.
pub(crate) static SESSION_GET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[2]) == 0 then return false end
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[2], 'lastUsed', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
end
local names = {'createdAt', 'lastUsed', 'version', 'chain'}
if redis.call('HGET', KEYS[2], 'version') ~= ARGV[5] then
  table.insert(names, 'variables')
  table.insert(names, 'cookies')
end
local values = redis.call('HMGET', KEYS[2], unpack(names))
local fields = {}
for index, name in ipairs(names) do
  if values[index] then
    table.insert(fields, name)
    table.insert(fields, values[index])
  end
end
return fields
",
    )
});

/// KEYS: the session. ARGV: variables or '', cookies or '' (each '' = unchanged),
/// whether each is given (0/1). Answers the new version, or nil when it is gone.
pub(crate) static SESSION_SAVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'variables', ARGV[1]) end
if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'cookies', ARGV[2]) end
return redis.call('HINCRBY', KEYS[1], 'version', 1)
",
    )
});

/// KEYS: the session, its chained responses. ARGV: the request's name, its response
/// (JSON), the session's lifetime (ms). Answers the new version of the responses, or
/// nil when the session is gone.
pub(crate) static SESSION_CHAIN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return redis.call('HINCRBY', KEYS[1], 'chain', 1)
",
    )
});

/// KEYS: the lock. ARGV: its holder's token. Releases it when still held by them.
pub(crate) static UNLOCK: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
",
    )
});

/// KEYS: the lock. ARGV: its holder's token, lifetime (ms). Extends it when still held.
pub(crate) static EXTEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
",
    )
});

/// KEYS: flows, the flow. ARGV: id, now, lifetime (ms), cap, key prefix of flows
/// (`<prefix>flow:`), the flow's record (JSON). At the cap the least recently used
/// finished flow is removed with its parts. Answers {1, evicted id or ''} or {0, ''}.
pub(crate) static FLOW_CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
local evicted = ''
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    if redis.call('HEXISTS', ARGV[5] .. id, 'finished') == 1 then
      evicted = id
      break
    end
  end
  if evicted == '' then return {0, ''} end
  redis.call('ZREM', KEYS[1], evicted)
  local base = ARGV[5] .. evicted
  redis.call('DEL', base, base .. ':executions', base .. ':order', base .. ':events', base .. ':seq')
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], 'record', ARGV[6], 'createdAt', ARGV[2], 'total', 0, 'succeeded', 0, 'failed', 0)
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {1, evicted}
",
    )
});

/// KEYS: flows, the flow. ARGV: id, now, lifetime (ms), touch (0/1). Answers the
/// flow's record, or nil when it is gone; touching extends every part's life.
pub(crate) static FLOW_GET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[2]) == 0 then return false end
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  for _, part in ipairs({'', ':executions', ':order', ':events', ':seq'}) do
    redis.call('PEXPIRE', KEYS[2] .. part, ARGV[3])
  end
end
return redis.call('HGET', KEYS[2], 'record')
",
    )
});

/// KEYS: the flow. ARGV: now. Finishes it once. Answers {first (0/1), total,
/// succeeded, failed, duration ms}, or nil when it is gone.
pub(crate) static FLOW_FINISH: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local done = redis.call('HGET', KEYS[1], 'finished')
if done then
  local parts = {0}
  for value in string.gmatch(done, '[^,]+') do table.insert(parts, tonumber(value)) end
  return parts
end
local fields = redis.call('HMGET', KEYS[1], 'total', 'succeeded', 'failed', 'createdAt')
local duration = math.max(0, tonumber(ARGV[1]) - tonumber(fields[4]))
local summary = {tonumber(fields[1]), tonumber(fields[2]), tonumber(fields[3]), duration}
redis.call('HSET', KEYS[1], 'finished', table.concat(summary, ','))
return {1, summary[1], summary[2], summary[3], summary[4]}
",
    )
});

/// KEYS: flows. ARGV: now, lifetime (ms), key prefix of flows (`<prefix>flow:`).
/// Answers {id, record, total, succeeded, failed, createdAt, finished summary or ''}
/// for each live flow.
pub(crate) static FLOW_LIST: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local rows = {}
local since = tonumber(ARGV[1]) - tonumber(ARGV[2])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], since, '+inf')) do
  local f = redis.call('HMGET', ARGV[3] .. id, 'record', 'total', 'succeeded', 'failed', 'createdAt', 'finished')
  if f[1] then
    table.insert(rows, {id, f[1], f[2] or '0', f[3] or '0', f[4] or '0', f[5] or '0', f[6] or ''})
  end
end
return rows
",
    )
});

/// KEYS: a flow's order of executions, its executions. Answers the executions kept
/// (JSON), oldest first.
pub(crate) static EXECUTION_LIST: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
if #ids == 0 then return {} end
local rows = {}
for _, json in ipairs(redis.call('HMGET', KEYS[2], unpack(ids))) do
  if json then table.insert(rows, json) end
end
return rows
",
    )
});

/// Keeps a new execution. KEYS: the flow, its executions, their order. ARGV: id,
/// the execution (JSON), executions kept, the flow's lifetime (ms).
pub(crate) const EXECUTION_RECORD: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[1])
while redis.call('LLEN', KEYS[3]) > tonumber(ARGV[3]) do
  redis.call('HDEL', KEYS[2], redis.call('LPOP', KEYS[3]))
end
redis.call('HINCRBY', KEYS[1], 'total', 1)
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 1
";

/// Changes a kept execution (gone already when the flow dropped it). KEYS: the flow,
/// its executions. ARGV: id, the execution (JSON), the count its outcome adds to
/// ('' when it has none yet, `succeeded` or `failed`).
pub(crate) const EXECUTION_UPDATE: &str = r"
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[3], 1) end
return 1
";

/// The `EVAL` of `source` with `keys` and `args`, for the ordered write queue.
pub(crate) fn eval(source: &str, keys: &[String], args: &[&str]) -> redis::Cmd {
    let mut command = redis::cmd("EVAL");
    command.arg(source).arg(keys.len()).arg(keys).arg(args);
    command
}
