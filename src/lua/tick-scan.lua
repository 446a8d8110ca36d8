#!lua flags=allow-key-locking
--[[ tick-scan: the first half of the scheduler's pass over one queue. Tells whether anything is
due, and if so which groups the due items (delayed jobs, ended backoffs, lapsed leases, jobs
past their deadline to start) belong to: the tick that follows must declare their keys (pending
outcome callbacks that are due make the tick worth running too; they belong to no group). When the queue's timer has come but nothing
is due after all (a lease it was set for has ended), it sets the timer to the next one itself,
so no tick is needed.

KEYS[1]  meta        hash    config and counters; `timer` is the queue's earliest timer
KEYS[2]  delayed     zset    '<id> <group>' by runAt
KEYS[3]  held        zset    group -> release time (+inf: paused)
KEYS[4]  active      zset    lease members '<id> <token><group>' by deadline
KEYS[5]  tick-lock   string  held while an opportunistic tick runs (expires by itself)
KEYS[6]  ready       zset    idle group heads (due ones make a tick worth running)
KEYS[7]  repeat-due  zset    repeat key -> next run
KEYS[8]  completed   zset    kept completed ids (a tick trims them past keepCompleted)
KEYS[9]  failed      zset    kept failed ids (a tick trims them past keepFailed)
KEYS[10] outcomes    zset    pending outcome callbacks by next attempt (read only while meta's
                             `outcomes` flag is set)
KEYS[11] cancelled   zset    kept cancelled ids (a tick trims them past keepFailed)
KEYS[12] prioritized zset    idle group heads with a priority other than 0
KEYS[13] expiring    zset    '<id> <group>' of TTL jobs not started, by deadline (read only
                             once meta's `expiring` flag is set, expiry.lua)
KEYS[14] expired     zset    kept expired ids (a tick trims them past keepFailed; read as
                             `expiring` is)

ARGV[1] now (epoch ms)
ARGV[2] limit: at most this many items per kind
ARGV[3] lockMs: 0 for the cron's ticks; > 0 for a request's opportunistic tick, which runs only
        if it can take the lock for this long (a burst of requests runs one pass, not many)

Returns {1, 'idle', timer (epoch ms, -1 = none)}: nothing due before `timer` (set here when it
        had passed);
        {1, 'locked'}: another opportunistic tick holds the lock;
        {1, 'due', {group...}}: run tick with these groups declared
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include outcome

local now, limit, lockMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end
local cfg, timer = M.cfg, tonumber(M.v.timer)
-- When the first ready head may start: now or earlier means a tick drains it.
local readyAt
if not M.v.paused and metaNum(M, 'ready') > 0 then
  local first = tonumber(redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')[2])
  local ranked = metaGet(M, 'prio') and redis.call('ZRANGE', KEYS[12], 0, 0)[1]
  if ranked and (not first or tonumber(string.sub(ranked, 1, 15)) < first) then first = tonumber(string.sub(ranked, 1, 15)) end
  if first then readyAt = math.max(first + cfg.orderingWindowMs, metaNum(M, 'hold')) end
end
local readyNow = readyAt ~= nil and readyAt <= now
if (not timer or timer > now) and not readyNow then return { 1, 'idle', timer or -1 } end
if lockMs > 0 and not redis.call('SET', KEYS[5], '1', 'NX', 'PX', lockMs) then return { 1, 'locked' } end

-- Each timed set's first entry says whether it holds anything due, or when it next will.
local dueKeys, nextAt = {}, nil
local function look(key, at)
  if at and at <= now then
    dueKeys[key] = true
  elseif at and at ~= math.huge and (not nextAt or at < nextAt) then
    nextAt = at
  end
end
for _, key in ipairs({ KEYS[2], KEYS[3], KEYS[4], KEYS[7] }) do
  local first = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
  look(key, first)
  -- No lease at all: meta's count of them is 0 (one a failed script leaked goes here, free).
  if key == KEYS[4] and not first and metaNum(M, 'active') ~= 0 then metaSet(M, 'active', false) end
end
look(KEYS[10], nextOutcomeAt({ outcomes = KEYS[10] }, M))
local ttl = metaGet(M, 'expiring') -- a queue that never had a TTL job reads neither key
if ttl then look(KEYS[13], tonumber(redis.call('ZRANGE', KEYS[13], 0, 0, 'WITHSCORES')[2])) end
local trim = redis.call('ZCARD', KEYS[8]) > cfg.keepCompleted or redis.call('ZCARD', KEYS[9]) > cfg.keepFailed
  or redis.call('ZCARD', KEYS[11]) > cfg.keepFailed or (ttl and redis.call('ZCARD', KEYS[14]) > cfg.keepFailed)
if not next(dueKeys) and not trim and not readyNow then
  if readyAt and (not nextAt or readyAt < nextAt) then nextAt = readyAt end
  metaSet(M, 'timer', nextAt and int(nextAt) or false)
  saveMeta(M)
  return { 1, 'idle', nextAt or -1 }
end

local groups, seen = {}, {}
local function add(group)
  if not seen[group] then
    seen[group] = true
    groups[#groups + 1] = group
  end
end
local function due(key)
  if not dueKeys[key] then return {} end
  return redis.call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', 0, limit)
end
for _, member in ipairs(due(KEYS[2])) do add(select(2, splitMember(member))) end
for _, group in ipairs(due(KEYS[3])) do add(group) end
for _, member in ipairs(due(KEYS[4])) do add(select(2, splitLease(member))) end
for _, member in ipairs(due(KEYS[13])) do add(select(2, splitMember(member))) end
return { 1, 'due', groups }
