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

ARGV[1] now (epoch ms)
ARGV[2] seed (random hex, for new lease tokens and jitter)
ARGV[3] limit: at most this many items per phase

Returns {1, nextDueAt (epoch ms, -1 = nothing scheduled), readyDue 0|1, more 0|1,
         {{repeat key, spec JSON}...}}
  readyDue: jobs are ready to be reserved now; more: a phase hit its limit, tick again
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include job
-- @include group
-- @include finish

local K = {
  meta = KEYS[1], jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5],
  delayed = KEYS[6], completed = KEYS[7], failed = KEYS[8],
  prefix = string.sub(KEYS[1], 1, -5), -- 'gq:{queue}:' (KEYS[1] ends in 'meta')
}
local now, seed, limit = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local REPEAT_RECHECK_MS = 60000

local first = redis.call('ZRANGE', K.ready, 0, 0, 'WITHSCORES')
if not first[1] then return { 1, -1, 0, 0, {} } end
if tonumber(first[2]) > now then return { 1, tonumber(first[2]), 0, 0, {} } end

local meta = redis.call('HMGET', K.meta, 'config', 'paused')
if not meta[1] then return { -1 } end
local cfg = cjson.decode(meta[1])
local more = false
local function due(key)
  local items = redis.call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', 0, limit)
  if #items == limit then more = true end
  return items
end

for _, id in ipairs(due(K.delayed)) do
  redis.call('ZREM', K.delayed, id)
  local state, data = decodeJob(redis.call('HGET', K.jobs, id))
  state.st, state.ra = nil, nil
  redis.call('HSET', K.jobs, id, encodeJob(state, data))
  addToGroup(groupKeyOf(K.prefix, state.g), K.ready, state.o, memberOf(state.s, id))
end

for _, group in ipairs(due(K.held)) do
  redis.call('ZREM', K.held, group)
  advanceGroup(groupKeyOf(K.prefix, group), K.ready)
end

for _, id in ipairs(due(K.active)) do
  redis.call('ZREM', K.active, id)
  local state, data = decodeJob(redis.call('HGET', K.jobs, id))
  local err = 'lease expired: no answer within ' .. ((state.to or cfg.timeoutMs) + 5000) .. ' ms'
  failJob(K, cfg, id, state, data, err, true, -1, seed, now)
end

if trimRetention(K.completed, K.jobs, cfg.keepCompleted) then more = true end
if trimRetention(K.failed, K.jobs, cfg.keepFailed) then more = true end

local repeats = {}
local dueRepeats = due(KEYS[9])
if #dueRepeats > 0 then
  local specs = redis.call('HMGET', KEYS[10], unpack(dueRepeats))
  for i, key in ipairs(dueRepeats) do
    if specs[i] then repeats[#repeats + 1] = { key, specs[i] } end
  end
end

-- Reset the marker to the exact earliest timer (it may have been lowered by timers now gone).
-- The repeats listed above are the caller's to commit (commit-repeat notes their next run);
-- should it not, this tick looks again after REPEAT_RECHECK_MS.
local nextTimer = more and now or nil
local function consider(at)
  if at and at ~= math.huge and (not nextTimer or at < nextTimer) then nextTimer = at end
end
for _, key in ipairs({ K.delayed, K.held, K.active }) do
  consider(tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]))
end
consider(tonumber(redis.call('ZRANGEBYSCORE', KEYS[9], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]))
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
