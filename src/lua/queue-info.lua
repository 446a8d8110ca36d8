#!lua flags=no-writes,allow-key-locking
--[[ queue-info: a queue's config, paused flag, counts and oldest ready job, in cheap reads.
waiting = jobs - active - delayed - completed - failed - cancelled - expired - results (every record is in
exactly one state);
groups = idle groups in ready + held groups + active groups (each busy group has one lease);
meta's counters give `active` and `ready` without a command.
oldest ready = the waiting job with the lowest orderMs among those that could start now: the
jobs offered in `ready` and `prioritized` (each idle group's head, a flow group's offered jobs),
whose wait is the queue's doing (its concurrency, its rate limit, a 429's hold, a paused queue,
the ordering window, a drain that falls behind). Jobs behind their own group's lease, in a held
(backoff, group rate limit) or paused group, and delayed jobs are not looked at. It costs one
ZRANGE of `ready`'s first head and, on a queue that has had priorities, one per priority among
the heads (each priority's first is its oldest) and one that finds no more, PRIORITIES_READ at
most; none when meta's `ready` count is 0.

KEYS[1] meta       hash  config and counters (meta.lua)
KEYS[2] jobs       hash  id -> job record
KEYS[3] ready      zset  idle group heads
KEYS[4] active     zset  lease members
KEYS[5] held       zset  held or parked groups
KEYS[6] delayed    zset  delayed job ids
KEYS[7] completed  zset  kept completed job ids
KEYS[8] failed     zset  kept failed job ids
KEYS[9] cancelled  zset  kept cancelled job ids
KEYS[10] results   zset  completed jobs kept for a waiter (finish.lua keepResult)
KEYS[11] prioritized zset idle group heads with a priority other than 0, by -priority
KEYS[12] expired   zset  kept expired job ids (read only once meta's `expiring` is set, expiry.lua)

Returns {1, config JSON, paused 0|1, waiting, delayed, active, completed, failed, groups, cancelled,
  oldest ready job's id ('' for none), its orderMs (0 for none), expired}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta

-- A queue's heads rarely have more priorities than this; past it, heads of lower priorities are
-- not looked at (the figure may then miss an older one).
local PRIORITIES_READ = 10

local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end
local active, idle = metaNum(M, 'active'), metaNum(M, 'ready')
local delayed = redis.call('ZCARD', KEYS[6])
local completed = redis.call('ZCARD', KEYS[7])
local failed = redis.call('ZCARD', KEYS[8])
local cancelled = redis.call('ZCARD', KEYS[9])
local expired = metaGet(M, 'expiring') and redis.call('ZCARD', KEYS[12]) or 0 -- a queue that never had a TTL job has none
local waiting = redis.call('HLEN', KEYS[2]) - active - delayed - completed - failed - cancelled - expired - redis.call('ZCARD', KEYS[10])
local groups = idle + redis.call('ZCARD', KEYS[5]) + active
local oldestId, oldestOrder = '', nil
if idle > 0 then
  local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  if first[1] then oldestId, oldestOrder = idOf(first[1]), tonumber(first[2]) end
  -- `prioritized` lists each priority's heads oldest first ('<orderMs><member>'), so the first
  -- of each priority is its oldest: walk the priorities, one ZRANGE each.
  local above = '-inf'
  for _ = 1, metaGet(M, 'prio') and PRIORITIES_READ or 0 do
    local head = redis.call('ZRANGE', KEYS[11], above, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
    if not head[1] then break end
    local orderMs = tonumber(string.sub(head[1], 1, 15))
    if not oldestOrder or orderMs < oldestOrder then oldestId, oldestOrder = idOf(string.sub(head[1], 16)), orderMs end
    above = '(' .. head[2]
  end
end
return { 1, M.v.config, M.v.paused and 1 or 0, waiting, delayed, active, completed, failed, groups, cancelled, oldestId, oldestOrder or 0, expired }
