#!lua flags=allow-key-locking
--[[ rejoin-job: a job brought back into its group by hand, as waiting now, at its own place in
its group: a delayed job (promote), or a failed one with its attempts reset (retry).

KEYS[1] meta     hash  config and counters (meta.lua)
KEYS[2] jobs     hash  id -> job record
KEYS[3] ready    zset  idle group heads
KEYS[4] active   zset  lease members (for the view)
KEYS[5] delayed  zset  '<id> <group>' by runAt: what a promoted job leaves
KEYS[6] failed   zset  kept failed ids: what a retried job leaves
KEYS[7] held     zset  group -> release time (a flow group's hold)
KEYS[8] prioritized zset idle group heads with a priority
KEYS[9] group    zset  the job's group (the caller read it with job-group)

ARGV[1] id
ARGV[2] the job's group
ARGV[3] now (epoch ms)
ARGV[4] the state it leaves: 'delayed' (promote) or 'failed' (retry)
ARGV[5] seed (retry: random hex, the retried job's nonce, see tokenFor)

Returns {1, job view (view.lua), dueAt, events?}: events, its `added` (events.lua, only while
  meta's `ev` is later than now)
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND, {-4, state} INVALID_STATE (not in that state),
        {-10, group} JOB_CHANGED_GROUP: the job's group is another one; call again with it declared
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include job-ops
-- @include view
-- @include quota
-- @include events

local K = { jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[7], prioritized = KEYS[8] }
local id, group, now, from = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]

-- The group is the one the caller declared: its key is the only group zset the script may touch.
local M, raw, err = loadJob(KEYS[1], K.jobs, id, { groupField(group) })
if err then return err end
openEvents(M, now)
local state, data = decodeJob(raw)
if state.g ~= group then return { JOB_CHANGED_GROUP, state.g } end
if state.st ~= from then return { INVALID_STATE, jobState(K, M, id, state) } end

if from == 'delayed' then
  redis.call('ZREM', KEYS[5], delayedMember(id, group))
else
  redis.call('ZREM', KEYS[6], id)
  -- Attempts start again at 0: a nonce keeps the new tokens unlike the ones of the first run.
  state.a, state.e, state.f, state.sa, state.n = 0, nil, nil, nil, string.sub(ARGV[5], 1, 8)
  state.oc = nil -- the outcome of the run that ended no longer describes the job
  -- Counted before it joins its group: the counts live in M alone, which saveMeta writes below.
  countJobs(M, 1) -- ended, it lives again
  countWaiting(M, id, 1, #data) -- and waits (bytes.lua)
end

local B = newBatch(M, now)
local record = attachWaiting(K, B, KEYS[9], id, state, data)
noteAdded(M, id, state, now)
flushBatch(K, B)
saveMeta(M)
return { 1, jobView(K, M, id, record, true), dueReport(M, now), M.events }
