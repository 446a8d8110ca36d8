--[[ tick: the scheduler's bounded pass over one queue. Promotes due delayed jobs, releases
groups whose retry backoff ended, expires leases past their deadline (a failed attempt: retry or
fail), trims retention, lists repeats that are due (the caller computes their next time and
commits each with commit-repeat), and reports when the queue next needs a tick.
An idle queue costs one command here: the `~timers` marker in `ready` holds the earliest timer
(delayed, held, lease, repeat), so one look at `ready` tells whether anything is due.

KEYS[1]  meta           hash  config, paused flag, pausedGroups count
KEYS[2]  jobs           hash  id -> job record
KEYS[3]  ready          zset  idle group heads (+ ~timers marker)
KEYS[4]  active         zset  leased job ids by lease deadline
KEYS[5]  held           zset  group -> release time (+inf: paused)
KEYS[6]  delayed        zset  delayed job ids by runAt
KEYS[7]  completed      zset  kept completed ids by finishedAt
KEYS[8]  failed         zset  kept failed ids by finishedAt
KEYS[9]  repeat-due     zset  repeat key -> next run (epoch ms)
KEYS[10] repeats        hash  repeat key -> repeat spec JSON
KEYS[11] tick-lock      string held while an opportunistic tick runs (expires by itself)
KEYS[12] metrics        hash  per-minute counters (expired leases count as retried or failed)
Group zsets are derived from the meta key's prefix.

ARGV[1] now (epoch ms)
ARGV[2] seed (random hex, for new lease tokens and jitter)
ARGV[3] limit: at most this many items per phase
ARGV[4] lockMs: 0 for the cron's ticks; > 0 for a request's opportunistic tick, which runs only
        if it can take the lock for this long (a burst of requests runs one pass, not many)

Returns {1, nextDueAt (epoch ms, -1 = nothing scheduled), readyDue 0|1, more 0|1,
         {{repeat key, spec JSON}...}, locked 0|1}
  readyDue: jobs are ready to be reserved now; more: a phase hit its limit, tick again;
  locked: another opportunistic tick holds the lock, nothing was done
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include job
-- @include group
-- @include finish
-- @include job-ops
-- @include metrics

local K = {
  meta = KEYS[1], jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5],
  delayed = KEYS[6], completed = KEYS[7], failed = KEYS[8], repeatDue = KEYS[9], repeats = KEYS[10], metrics = KEYS[12],
  prefix = string.sub(KEYS[1], 1, -5), -- 'gq:{queue}:' (KEYS[1] ends in 'meta')
}
local now, seed, limit, lockMs = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
-- Due repeats go back to the caller to commit; should no commit come, look again this late.
local REPEAT_RECHECK_MS = 60000

local first = redis.call('ZRANGE', K.ready, 0, 0, 'WITHSCORES')
if not first[1] then return { 1, -1, 0, 0, {} } end
if tonumber(first[2]) > now then return { 1, tonumber(first[2]), 0, 0, {} } end
-- Taken only when there is work: an idle queue stays at one command.
if lockMs > 0 and not redis.call('SET', KEYS[11], '1', 'NX', 'PX', lockMs) then
  return { 1, -1, 0, 0, {}, 1 }
end

local meta = redis.call('HMGET', K.meta, 'config', 'paused')
if not meta[1] then return { -1 } end
local cfg = cjson.decode(meta[1])
local more = false
-- At most `limit` members due by now, with their scores: {member, score, member, score, ...}.
local function due(key)
  local items = redis.call('ZRANGEBYSCORE', key, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
  if #items == 2 * limit then more = true end
  local members = {}
  for i = 1, #items, 2 do members[#members + 1] = items[i] end
  return members, items
end

local B = newBatch()
local promoted = due(K.delayed)
if #promoted > 0 then
  redis.call('ZREM', K.delayed, unpack(promoted))
  for i, raw in ipairs(redis.call('HMGET', K.jobs, unpack(promoted))) do
    local state, data = decodeJob(raw)
    attachWaiting(K, B, promoted[i], state, data)
  end
end

local released = due(K.held)
if #released > 0 then
  redis.call('ZREM', K.held, unpack(released))
  for _, group in ipairs(released) do advanceGroup(B, groupKeyOf(K.prefix, group)) end
end

local expired, deadlines = due(K.active)
local T = newTally()
if #expired > 0 then
  redis.call('ZREM', K.active, unpack(expired))
  for i, raw in ipairs(redis.call('HMGET', K.jobs, unpack(expired))) do
    local state, data = decodeJob(raw)
    local err = 'lease expired: no answer within ' .. leaseMsOf(state, cfg) .. ' ms'
    local outcome = failJob(K, B, cfg, expired[i], state, data, tonumber(deadlines[2 * i]), err, true, -1, seed, now)
    countOutcome(T, outcome) -- retried, or failed when it was the last attempt
  end
end
flushBatch(K, B)
writeTally(K.metrics, T, now)

if trimRetention(K.completed, K.jobs, cfg.keepCompleted, limit) then more = true end
if trimRetention(K.failed, K.jobs, cfg.keepFailed, limit) then more = true end

local repeats = {}
local dueRepeats = due(K.repeatDue)
if #dueRepeats > 0 then
  local specs = redis.call('HMGET', K.repeats, unpack(dueRepeats))
  for i, key in ipairs(dueRepeats) do
    if specs[i] then repeats[#repeats + 1] = { key, specs[i] } end
  end
end

-- Reset the marker to the exact earliest timer (it may have been lowered by timers now gone).
-- The repeats listed above are the caller's to commit (commit-repeat notes their next run).
local nextTimer = more and now or nil
local function consider(at)
  if at and at ~= math.huge and (not nextTimer or at < nextTimer) then nextTimer = at end
end
for _, key in ipairs({ K.delayed, K.held, K.active }) do
  consider(tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]))
end
consider(tonumber(redis.call('ZRANGEBYSCORE', K.repeatDue, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]))
if #repeats > 0 then consider(now + REPEAT_RECHECK_MS) end
if nextTimer then
  redis.call('ZADD', K.ready, nextTimer, TIMERS)
else
  redis.call('ZREM', K.ready, TIMERS)
end

local readyDue, nextDueAt = 0, nextTimer or -1
local heads = redis.call('ZRANGE', K.ready, 0, 1, 'WITHSCORES')
for i = 1, #heads, 2 do
  if heads[i] ~= TIMERS then
    local at = tonumber(heads[i + 1]) + cfg.orderingWindowMs
    if at <= now then
      if not meta[2] then readyDue = 1 end
    elseif nextDueAt < 0 or at < nextDueAt then
      nextDueAt = at
    end
    break
  end
end
return { 1, nextDueAt, readyDue, more and 1 or 0, repeats }
