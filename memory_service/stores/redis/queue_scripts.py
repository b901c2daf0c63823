"""The Lua scripts of :mod:`.redis_queue`: each queue operation runs as one atomic script.

Atomicity is what makes the ordering guarantee hold across processes: "is another consumer
holding this topic?" and "deliver the head to me" must not interleave with another claim.

Per topic (all keys share the ``{topic}`` hash tag, so a script's keys sit in one Cluster slot):

* ``stream``: a Stream of messages (field ``p``: the JSON payload) and a consumer group. A live
  message is either not yet delivered (after the group's last-delivered id) or in the group's
  pending-entries list (PEL), owned by a real consumer (*inflight*) or by the placeholder
  consumer ``PARKED`` (*pending* again: released, failed and waiting, or reclaimed).
* ``meta``: a hash of ``a:<id>`` (failed attempts), ``e:<id>`` (last error), ``d:<id>`` (not
  claimable before this server time, ms).
* ``dead``: a Stream of dead letters (fields ``origin``, ``p``, ``attempts``, ``error``).

Acked and dead messages are XDEL'd from ``stream``, so XLEN counts the live ones. Times come from
the server (``TIME``, PEL idle times), so consumers on hosts with skewed clocks agree.
"""

from __future__ import annotations

# Shared helpers, prepended to every script.
_LIB = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function ensure_group(stream, group)
  redis.pcall('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM')  -- BUSYGROUP when it exists
end

-- Messages in the PEL: {owned by consumers other than `me` and the placeholder, owned by the placeholder}.
local function holds(stream, group, me, parked)
  local others, waiting = 0, 0
  local summary = redis.call('XPENDING', stream, group)
  if summary[4] then
    for _, c in ipairs(summary[4]) do
      if c[1] == parked then waiting = tonumber(c[2])
      elseif c[1] ~= me then others = others + tonumber(c[2]) end
    end
  end
  return others, waiting
end

-- Holds idle at least `min_idle` ms go to the placeholder (XAUTOCLAIM, as for a dead consumer).
local function reclaim(stream, group, parked, min_idle)
  local _, before = holds(stream, group, parked, parked)
  local cursor = '0-0'
  repeat
    cursor = redis.call('XAUTOCLAIM', stream, group, parked, min_idle, cursor, 'COUNT', 1000, 'JUSTID')[1]
  until cursor == '0-0'
  local _, after = holds(stream, group, parked, parked)
  return math.max(0, after - before)
end

local function field(fields, name)
  for i = 1, #fields, 2 do
    if fields[i] == name then return fields[i + 1] end
  end
  return nil
end

local function forget(meta, id)
  redis.call('HDEL', meta, 'a:' .. id, 'e:' .. id, 'd:' .. id)
end

local function message(meta, entry)
  local id = entry[1]
  local info = redis.call('HMGET', meta, 'a:' .. id, 'e:' .. id)
  return {id, field(entry[2], 'p') or '{}', info[1] or '0', info[2] or ''}
end
"""

# KEYS: stream, meta. ARGV: group, consumer, limit, visibility ms, placeholder.
# Returns {{id, payload, attempts, last error}, ...}, head of the line first.
CLAIM = (
    _LIB
    + """
local stream, meta = KEYS[1], KEYS[2]
local group, me, limit, visibility, parked = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
ensure_group(stream, group)
if (holds(stream, group, me, parked)) > 0 then
  reclaim(stream, group, parked, visibility)
  if (holds(stream, group, me, parked)) > 0 then return {} end  -- a live consumer holds the topic
end
local now, out = now_ms(), {}
for _, e in ipairs(redis.call('XPENDING', stream, group, '-', '+', limit, parked)) do
  local id = e[1]
  if tonumber(redis.call('HGET', meta, 'd:' .. id) or 0) > now then
    return out  -- head of line: nothing passes a message waiting out its backoff
  end
  local got = redis.call('XCLAIM', stream, group, me, 0, id)[1]
  if got and got[2] then table.insert(out, message(meta, got)) else forget(meta, id) end
end
if #out < limit then
  local read = redis.call('XREADGROUP', 'GROUP', group, me, 'COUNT', limit - #out, 'STREAMS', stream, '>')
  if read then
    for _, entry in ipairs(read[1][2]) do table.insert(out, message(meta, entry)) end
  end
end
return out
"""
)

# KEYS: stream, meta. ARGV: group, ids... Returns how many messages were deleted.
ACK = (
    _LIB
    + """
local stream, meta = KEYS[1], KEYS[2]
ensure_group(stream, ARGV[1])
local done = 0
for i = 2, #ARGV do
  redis.call('XACK', stream, ARGV[1], ARGV[i])
  done = done + redis.call('XDEL', stream, ARGV[i])
  forget(meta, ARGV[i])
end
return done
"""
)

# KEYS: stream, meta, dead. ARGV: group, id, error, max attempts, backoff base ms, backoff cap ms,
# placeholder. Returns 1 when the message went dead, 0 when it waits for a retry, -1 when nobody
# held it (nothing done).
FAIL = (
    _LIB
    + """
local stream, meta, dead = KEYS[1], KEYS[2], KEYS[3]
local group, id, err, parked = ARGV[1], ARGV[2], ARGV[3], ARGV[7]
ensure_group(stream, group)
local held = redis.call('XPENDING', stream, group, id, id, 1)[1]
if not held or held[2] == parked then return -1 end
local attempts = redis.call('HINCRBY', meta, 'a:' .. id, 1)
redis.call('HSET', meta, 'e:' .. id, err)
if attempts >= tonumber(ARGV[4]) then
  local entry = redis.call('XRANGE', stream, id, id)[1]
  local payload = entry and field(entry[2], 'p') or '{}'
  redis.call('XADD', dead, '*', 'origin', id, 'p', payload, 'attempts', attempts, 'error', err)
  redis.call('XACK', stream, group, id)
  redis.call('XDEL', stream, id)
  forget(meta, id)
  return 1
end
local wait = math.min(tonumber(ARGV[6]), tonumber(ARGV[5]) * 2 ^ (attempts - 1))
redis.call('HSET', meta, 'd:' .. id, math.floor(now_ms() + wait))
redis.call('XCLAIM', stream, group, parked, 0, id, 'JUSTID')
return 0
"""
)

# KEYS: stream. ARGV: group, consumer, placeholder. Returns how many messages were given back.
RELEASE = (
    _LIB
    + """
local stream, group, me, parked = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
ensure_group(stream, group)
local n = 0
while true do
  local held = redis.call('XPENDING', stream, group, '-', '+', 500, me)
  if #held == 0 then break end
  local args = {'XCLAIM', stream, group, parked, 0}
  for _, e in ipairs(held) do table.insert(args, e[1]) end
  table.insert(args, 'JUSTID')
  redis.call(unpack(args))
  n = n + #held
end
redis.call('XGROUP', 'DELCONSUMER', stream, group, me)  -- holds nothing now (atomic script)
return n
"""
)

# KEYS: stream. ARGV: group, min idle ms, placeholder. Returns how many holds were taken back;
# consumers left holding nothing are forgotten (a dead process's name would otherwise stay).
RECLAIM = (
    _LIB
    + """
local stream, group, parked = KEYS[1], ARGV[1], ARGV[3]
ensure_group(stream, group)
local n = reclaim(stream, group, parked, ARGV[2])
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
  local name, pending = field(c, 'name'), field(c, 'pending')
  if name ~= parked and tonumber(pending) == 0 then
    redis.call('XGROUP', 'DELCONSUMER', stream, group, name)
  end
end
return n
"""
)

# KEYS: stream, dead. ARGV: group, placeholder. Returns {live, inflight, dead}.
COUNTS = """
local stream, dead, group, parked = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local inflight = 0
local summary = redis.pcall('XPENDING', stream, group)
if type(summary) == 'table' and not summary.err and summary[4] then
  for _, c in ipairs(summary[4]) do
    if c[1] ~= parked then inflight = inflight + tonumber(c[2]) end
  end
end
return {redis.call('XLEN', stream), inflight, redis.call('XLEN', dead)}
"""

# KEYS: stream, dead. ARGV: group, "1" for all or "0", ids (origin ids)... Returns how many.
REPLAY_DEAD = (
    _LIB
    + """
local stream, dead, group = KEYS[1], KEYS[2], ARGV[1]
ensure_group(stream, group)
local all, wanted = ARGV[2] == '1', {}
for i = 3, #ARGV do wanted[ARGV[i]] = true end
local n = 0
for _, entry in ipairs(redis.call('XRANGE', dead, '-', '+')) do
  if all or wanted[field(entry[2], 'origin')] then
    redis.call('XADD', stream, '*', 'p', field(entry[2], 'p') or '{}')
    redis.call('XDEL', dead, entry[1])
    n = n + 1
  end
end
return n
"""
)
