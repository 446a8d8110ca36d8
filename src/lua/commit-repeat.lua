#!lua flags=allow-key-locking
--[[ commit-repeat: creates one due run of a repeatable job and moves the repeat to its next run,
with compare-and-set: only if the repeat is still the version the caller computed from and its
next run is still `runAt` (two schedulers racing create the run once). The run's id is
deterministic, `repeat:<key>:<runAt>`, so a run is never enqueued twice.

KEYS[1] meta        hash  config and counters (meta.lua)
KEYS[2] jobs        hash  id -> job record
KEYS[3] ready       zset  idle group heads
KEYS[4] delayed     zset  '<id> <group>' by runAt
KEYS[5] active      zset  lease members (a duplicate run's state)
KEYS[6] repeats     hash  repeat key -> spec JSON
KEYS[7] repeat-due  zset  repeat key -> next run
KEYS[8] held        zset  group -> release time (a flow group's hold)
KEYS[9] prioritized zset  idle group heads with a priority
KEYS[10] group      zset  the repeat's group

ARGV[1] now (epoch ms)
ARGV[2] repeat key
ARGV[3] version the caller read
ARGV[4] runAt the caller read (epoch ms)
ARGV[5] the run after it (epoch ms; -1 = none)
ARGV[6] the repeat's group (as the caller read it)

Returns {1, run id, run state, duplicate 0|1, dueAt, events?}, or {0} when the repeat changed
  meanwhile; events: the new run's `added` (events.lua, only while meta's `ev` is later than now)
Errors  {-1} QUEUE_NOT_FOUND, {-7} REPEAT_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include insert
-- @include quota
-- @include partition
-- @include repeat-spec
-- @include events

local K = { jobs = KEYS[2], ready = KEYS[3], delayed = KEYS[4], active = KEYS[5], held = KEYS[8], prioritized = KEYS[9] }
local repeatsKey, repeatDueKey, groupKey = KEYS[6], KEYS[7], KEYS[10]
local now, key, group = tonumber(ARGV[1]), ARGV[2], ARGV[6]
local version, runAt, nextRunAt = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])

local M = openMeta(KEYS[1], { groupField(group) })
checkPartition(M, group)
if not M.cfg then return { QUEUE_NOT_FOUND } end
openEvents(M, now)
local specJson = redis.call('HGET', repeatsKey, key)
if not specJson then return { REPEAT_NOT_FOUND } end
local spec = cjson.decode(specJson)
if spec.v ~= version or spec.nextRunAt ~= runAt or spec.group ~= group then return { 0 } end

local id = 'repeat:' .. key .. ':' .. string.format('%d', runAt)
local existing = redis.call('HGET', K.jobs, id)
local state
if existing then
  state = stateOfExisting(K, M, id, existing)
else
  local B = newBatch(M, now)
  local seq = metaNum(M, 'seq') + 1
  metaSet(M, 'seq', int(seq))
  local job = newJobState(now, spec.group, seq, runAt, 0, now ~= runAt and { c = now } or nil)
  B.fresh[1], B.fresh[2] = id, encodeJob(job, spec.data)
  state = placeJob(K, B, groupKey, id, job)
  noteAdded(M, id, job, now)
  countJobs(M, 1) -- a run counts against maxJobs but is never refused: the scheduler is no stranger
  countBytes(M, #spec.data) -- and against maxBytes likewise (bytes.lua)
  flushBatch(K, B)
  spec.count = spec.count + 1
end

saveRepeat(M, repeatsKey, repeatDueKey, key, spec, nextRunAt)
saveMeta(M)
return { 1, id, state, existing and 1 or 0, dueReport(M, now), M.events }
