#!lua flags=allow-key-locking
--[[ promote-job: a delayed job joins its group now.

KEYS[1] meta     hash  config and counters (meta.lua)
KEYS[2] jobs     hash  id -> job record
KEYS[3] ready    zset  idle group heads
KEYS[4] active   zset  lease members (for the view)
KEYS[5] delayed  zset  '<id> <group>' by runAt
KEYS[6] held     zset  group -> release time (a flow group's hold)
KEYS[7] prioritized zset idle group heads with a priority
KEYS[8] group    zset  the job's group (the caller read it with job-group)

ARGV[1] id
ARGV[2] the job's group
ARGV[3] now (epoch ms)

Returns {1, job view (view.lua), dueAt}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND, {-4, state} INVALID_STATE (not delayed),
        {-10, group} JOB_CHANGED_GROUP: the job's group is another one; call again with it declared
]]
-- @include job
-- @include rejoin

local K = { jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[6], prioritized = KEYS[7] }
local id = ARGV[1]
local M, state, data, err = loadToRejoin(KEYS[1], K, id, ARGV[2], 'delayed')
if err then return err end
redis.call('ZREM', KEYS[5], delayedMember(id, state.g))
return rejoinGroup(K, M, KEYS[8], id, state, data, tonumber(ARGV[3]))
