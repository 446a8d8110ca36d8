#!lua flags=allow-key-locking
--[[ retry-job: a failed job back to waiting, attempts reset, at its own place in its group.

KEYS[1] meta    hash  config and counters (meta.lua)
KEYS[2] jobs    hash  id -> job record
KEYS[3] ready   zset  idle group heads
KEYS[4] active  zset  lease members (for the view)
KEYS[5] failed  zset  kept failed ids
KEYS[6] held    zset  group -> release time (a flow group's hold)
KEYS[7] prioritized zset idle group heads with a priority
KEYS[8] group   zset  the job's group (the caller read it with job-group)

ARGV[1] id
ARGV[2] seed (random hex: the retried job's nonce, see tokenFor)
ARGV[3] the job's group
ARGV[4] now (epoch ms)

Returns {1, job view (view.lua), dueAt}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND, {-4, state} INVALID_STATE (not failed),
        {-10, group} JOB_CHANGED_GROUP: the job's group is another one; call again with it declared
]]
-- @include rejoin
-- @include quota

local K = { jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[6], prioritized = KEYS[7] }
local id = ARGV[1]
local M, state, data, err = loadToRejoin(KEYS[1], K, id, ARGV[3], 'failed')
if err then return err end
redis.call('ZREM', KEYS[5], id)
-- Attempts start again at 0: a nonce keeps the new tokens unlike the ones of the first run.
state.a, state.e, state.f, state.sa, state.n = 0, nil, nil, nil, string.sub(ARGV[2], 1, 8)
state.oc = nil -- the outcome of the run that ended no longer describes the job
-- Counted before it joins its group: the counts live in M alone, which rejoinGroup writes.
countJobs(M, 1) -- ended, it lives again
countWaiting(M, id, 1, #data) -- and waits (bytes.lua)
return rejoinGroup(K, M, KEYS[8], id, state, data, tonumber(ARGV[4]))
