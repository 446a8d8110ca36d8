#!lua flags=allow-key-locking
--[[ tick-scan: the first half of the scheduler's pass over one queue. Tells whether anything is
due, and if so which groups the due items (delayed jobs, ended backoffs, expired leases) belong
to: the tick that follows must declare their keys. Costs one command when nothing is due.

KEYS[1] meta       hash    config and counters; `timer` is the queue's earliest timer
KEYS[2] delayed    zset    '<id> <group>' by runAt
KEYS[3] held       zset    group -> release time (+inf: paused)
KEYS[4] active     zset    lease members '<id> <token><group>' by deadline
KEYS[5] tick-lock  string  held while an opportunistic tick runs (expires by itself)
KEYS[6] ready      zset    idle group heads (due ones make a tick worth running)

ARGV[1] now (epoch ms)
ARGV[2] limit: at most this many items per kind
ARGV[3] lockMs: 0 for the cron's ticks; > 0 for a request's opportunistic tick, which runs only
        if it can take the lock for this long (a burst of requests runs one pass, not many)

Returns {1, 'idle', timer (epoch ms, -1 = none)}: nothing due before `timer`;
        {1, 'locked'}: another opportunistic tick holds the lock;
        {1, 'due', {group...}}: run tick with these groups declared
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta

local now, limit, lockMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end
local timer = tonumber(M.v.timer)
local function readyHeadDue()
  if M.v.paused or metaNum(M, 'ready') == 0 then return false end
  local head = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
  return tonumber(head[2]) + M.cfg.orderingWindowMs <= now
end
-- Nothing timed is due; ready heads due now still want a tick (it reports readyDue: drain).
if (not timer or timer > now) and not readyHeadDue() then return { 1, 'idle', timer or -1 } end
if lockMs > 0 and not redis.call('SET', KEYS[5], '1', 'NX', 'PX', lockMs) then return { 1, 'locked' } end

local groups, seen = {}, {}
local function add(group)
  if not seen[group] then
    seen[group] = true
    groups[#groups + 1] = group
  end
end
local function due(key)
  return redis.call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', 0, limit)
end
for _, member in ipairs(due(KEYS[2])) do add(select(2, splitMember(member))) end
for _, group in ipairs(due(KEYS[3])) do add(group) end
for _, member in ipairs(due(KEYS[4])) do add(select(2, splitLease(member))) end
return { 1, 'due', groups }
