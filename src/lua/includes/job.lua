-- Job records and the members that point at them.
--
-- A job is one field of the `jobs` hash: `<state JSON>\n<data JSON>`. The state JSON is written
-- by cjson and so never holds a raw newline; the first "\n" always ends it. The data stays the
-- exact text the producer sent (cjson would turn [] into {} and round big numbers). A job with
-- an attempt history (history.lua) has `h` in its state and the history's JSON as a line of its
-- own between the two, so that listings skip it unread; decodeJob puts its text in `state.h`
-- and encodeJob writes it back, so every script carries it along untouched.
-- State fields (short, they are paid for in every waiting job):
--   g group, s enqueue sequence, o orderMs, c createdAt (only when it differs from o),
--   a attempts made, n a retry's nonce (see tokenFor), ma/bo/to per-job maxAttempts/backoff/timeoutMs,
--   st 'delayed'|'completed'|'failed'|'cancelled' (absent: waiting or active), ra runAt,
--   sa startedAt (recorded on demand), f finishedAt, r result, rt result truncated,
--   e last error, p progress, pr priority (absent: 0), th 429s in a row, tt ms held by 429s (finish.lua),
--   rl times a batch gave it back untouched (finish.lua Batch.release),
--   db/dx debounce key and deadline, i 1 when the producer gave the id (dedup window), w 1 when a waiter asked for its end (finish.lua keepResult), h attempt history (1 in the stored JSON: its line follows),
--   cb the job's own callback URL, oc how its outcome callback ended
--   (outcome.lua: {st = 'delivered'|'abandoned', n attempts, d deliveredAt, le last error}),
--   tp/ts the W3C traceparent and tracestate its producer sent (docs/tracing.md: 63 bytes, and
--   8 + the tracestate's JSON; no field when none was sent), forwarded on every delivery.
-- Members, each carrying what the scripts that meet it need, so that no key is looked up:
--   group zset and `ready`: the sequence zero-padded to 15 digits, then the id (equal orderMs
--     then sort by enqueue order, exactly);
--   `delayed`: '<id> <group>' (ids hold no space), so the scheduler learns each due job's group
--     (whose key it must declare) without reading records;
--   `active`: '<id> <token><group>', the token being 16 hex digits: removing that member is the
--     lease's fencing check and its end in one command (and equal deadlines list by id).

local DAY_MS = 86400000
-- A lease outlives its delivery's timeout by this much, so a synchronous delivery that the
-- dispatcher aborts at timeoutMs never outlives its lease.
local LEASE_GRACE_MS = 5000

local function leaseMsOf(state, cfg)
  return (state.to or cfg.timeoutMs) + LEASE_GRACE_MS
end

local function decodeJob(raw)
  local nl = string.find(raw, '\n', 1, true)
  local state = cjson.decode(string.sub(raw, 1, nl - 1))
  if state.h then
    local start = nl + 1
    nl = string.find(raw, '\n', start, true)
    state.h = string.sub(raw, start, nl - 1)
  end
  return state, string.sub(raw, nl + 1)
end

local function encodeJob(state, data)
  local history = state.h
  if not history then return cjson.encode(state) .. '\n' .. data end
  state.h = 1
  local head = cjson.encode(state)
  state.h = history
  return head .. '\n' .. history .. '\n' .. data
end

local function memberOf(seq, id)
  return string.format('%015d', seq) .. id
end

local function idOf(member)
  return string.sub(member, 16)
end

local function delayedMember(id, group)
  return id .. ' ' .. group
end

local function leaseMember(token, id, group)
  return id .. ' ' .. token .. group
end

-- A delayed member '<id> <group>' -> id, group.
local function splitMember(member)
  local space = string.find(member, ' ', 1, true)
  return string.sub(member, 1, space - 1), string.sub(member, space + 1)
end

-- A lease member '<id> <token><group>' -> id, group.
local function splitLease(member)
  local id, rest = splitMember(member)
  return id, string.sub(rest, 17)
end

-- Integers as Redis should store them (Lua would write 1e+15 for large ones).
local function int(x)
  return string.format('%.0f', x)
end

-- The job's current lease token, derived rather than stored (a stored one would cost every
-- waiting job 23 bytes): unguessable without the queue's secret (meta), and new on every lease
-- end, since each end counts an attempt. A job retried by hand starts again at attempt 0 with a
-- nonce of its own, so no earlier token comes back.
local function tokenFor(secret, id, state)
  local input = secret .. '\0' .. id .. '\0' .. state.s .. '\0' .. (state.a or 0) .. '\0' .. (state.n or '')
  if state.th then input = input .. '\0' .. state.th end -- a 429 counts no attempt (finish.lua)
  if state.rl then input = input .. '\0r' .. state.rl end -- nor does a batch's release (finish.lua)
  return string.sub(redis.sha1hex(input), 1, 16)
end

-- A pseudo-random number in [0, 1) for backoff jitter, unpredictable through the random seed
-- (Redis seeds Lua's math.random identically for every script).
local function jitterFor(seed, id)
  return tonumber(string.sub(redis.sha1hex(seed .. '\1' .. id), 1, 8), 16) / 4294967296
end
