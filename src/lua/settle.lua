--[[ settle: ends leases (complete or fail, each fenced by its token) and then reserves up to N
ready jobs, in one round trip. Reserve-only, complete-and-reserve-next and batched acks of a
drain are all this one script. Finished groups offer their next job to `ready` first, so the
reservation picks the oldest heads across all groups, this group's next one included (G5).

KEYS[1] meta           hash  config, paused flag, pausedGroups count
KEYS[2] jobs           hash  id -> job record
KEYS[3] ready          zset  idle group heads (+ ~timers marker)
KEYS[4] active         zset  leased job ids by lease deadline (epoch ms)
KEYS[5] held           zset  group -> release time (+inf: paused)
KEYS[6] completed      zset  kept completed ids by finishedAt
KEYS[7] failed         zset  kept failed ids by finishedAt
KEYS[8] paused-groups  set   paused group names
KEYS[9] metrics        hash  per-minute counters: this call adds its outcomes once, at the end
Group zsets are derived from the meta key's prefix and the group names found in job records.

ARGV[1] now (epoch ms)
ARGV[2] seed (random hex, for new lease tokens)
ARGV[3] m, the number of outcomes
ARGV[4] n, how many jobs to reserve afterwards (0: none)
ARGV[5] '1': reserve only if every outcome's lease was live (complete/fail of one lease: a
        stale holder must change nothing, not even lease jobs it would never receive)
then 6 fields per outcome: kind ('complete'|'fail'), id, lease token,
  payload (complete: result JSON text or ''; fail: error text),
  flag (complete: '1' = result truncated; fail: '1' = may retry),
  retryAfterMs (fail: -1 = use the backoff)

Returns {1, {{id, state}...}, config JSON, {{id, state JSON, data, lease deadline}...}}
  where state is 'completed' | 'waiting' (retry pending) | 'failed' | 'LEASE_LOST'
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include job
-- @include group
-- @include lease
-- @include finish
-- @include reserve
-- @include metrics

local K = {
  meta = KEYS[1], jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5],
  completed = KEYS[6], failed = KEYS[7], pausedGroups = KEYS[8], metrics = KEYS[9],
  prefix = string.sub(KEYS[1], 1, -5), -- 'gq:{queue}:' (KEYS[1] ends in 'meta')
}
local now, seed = tonumber(ARGV[1]), ARGV[2]
local m, n, onlyIfLive = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5] == '1'

local meta = redis.call('HMGET', K.meta, 'config', 'paused', 'pausedGroups')
if not meta[1] then return { -1 } end
local cfg = cjson.decode(meta[1])

local results = {}
if m > 0 then
  -- Every record and lease deadline in two reads, whatever the number of outcomes.
  local ids = {}
  for i = 1, m do ids[i] = ARGV[5 + (i - 1) * 6 + 2] end
  local raws = redis.call('HMGET', K.jobs, unpack(ids))
  local deadlines = redis.call('ZMSCORE', K.active, unpack(ids))
  local live, seen, ended = {}, {}, {}
  for i = 1, m do
    local state, data = leasedRecord(raws[i], ARGV[5 + (i - 1) * 6 + 3])
    if state and deadlines[i] and not seen[ids[i]] then
      live[i] = { state, data, tonumber(deadlines[i]) }
      seen[ids[i]] = true -- an id given twice: the second is a stale holder
      ended[#ended + 1] = ids[i]
    end
  end
  if #ended > 0 then redis.call('ZREM', K.active, unpack(ended)) end
  if onlyIfLive and #ended < m then n = 0 end

  local B, T = newBatch(), newTally()
  for i = 1, m do
    local b = 5 + (i - 1) * 6
    local kind, payload, flag = ARGV[b + 1], ARGV[b + 4], ARGV[b + 5] == '1'
    local outcome = 'LEASE_LOST'
    local lease = live[i]
    if lease and kind == 'complete' then
      outcome = completeJob(K, B, cfg, ids[i], lease[1], lease[2], lease[3], payload, flag, now)
    elseif lease then
      outcome = failJob(K, B, cfg, ids[i], lease[1], lease[2], lease[3], payload, flag,
        tonumber(ARGV[b + 6]), seed, now)
    end
    results[i] = { ids[i], outcome }
    countOutcome(T, outcome)
  end
  flushBatch(K, B)
  writeTally(K.metrics, T, now)
end

local jobs = {}
if n > 0 and not meta[2] then
  jobs = reserveJobs(K, cfg, tonumber(meta[3] or '0'), n, now)
end
return { 1, results, meta[1], jobs }
