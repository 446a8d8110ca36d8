#!lua flags=allow-key-locking
--[[ retry-jobs: one bounded step of "retry every failed job": the jobs named (read by
finished-page, their group keys declared) go back to waiting, attempts reset, each at its own
place in its group, as rejoin-job does for one. A job whose group is not the declared one
(removed and enqueued again meanwhile) is left for the caller's next read, which names the
right group; an id whose job is no longer failed leaves the failed zset.

KEYS[1]    meta    hash  config and counters (meta.lua)
KEYS[2]    jobs    hash  id -> job record
KEYS[3]    ready   zset  idle group heads
KEYS[4]    failed  zset  kept failed ids
KEYS[5]    active  zset  lease members (a flow group's leases)
KEYS[6]    held    zset  group -> release time (a flow group's hold)
KEYS[7]    prioritized zset idle group heads with a priority
KEYS[7+i]  group   zset  the group of job i (read with finished-page)

ARGV[1] now (epoch ms)
ARGV[2] seed (random hex: each retried job's nonce derives from it, see tokenFor)
ARGV[3...] id, group of each job

Returns {1, jobs retried, failed jobs left, dueAt, events?}: events, an `added` for each job
  retried (events.lua, only while meta's `ev` is later than now)
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include job-ops
-- @include quota
-- @include events

local now, seed = tonumber(ARGV[1]), ARGV[2]
local n = (#ARGV - 2) / 2
local ids, groups, groupFields = {}, {}, {}
for i = 1, n do
  ids[i], groups[i] = ARGV[1 + 2 * i], ARGV[2 + 2 * i]
  groupFields[i] = groupField(groups[i])
end
local M = openMeta(KEYS[1], groupFields)
if not M.cfg then return { QUEUE_NOT_FOUND } end
openEvents(M, now)
local K = { jobs = KEYS[2], ready = KEYS[3], active = KEYS[5], held = KEYS[6], prioritized = KEYS[7] }
local B, retried, leaving = newBatch(M, now), 0, {}
local raws = n > 0 and redis.call('HMGET', K.jobs, unpack(ids)) or {}
for i = 1, n do
  local id, raw = ids[i], raws[i]
  local state, data
  if raw then state, data = decodeJob(raw) end
  if not state or state.st ~= 'failed' then
    -- Retried or removed meanwhile (its member went with it); a member left without a failed
    -- job would be read again at every step: drop it.
    leaving[#leaving + 1] = id
  elseif state.g == groups[i] then
    leaving[#leaving + 1] = id
    -- Attempts start again at 0: a nonce keeps the new tokens unlike the ones of the first run.
    state.a, state.e, state.f, state.sa, state.oc = 0, nil, nil, nil, nil
    state.n = string.sub(redis.sha1hex(seed .. '\1' .. id), 1, 8)
    attachWaiting(K, B, KEYS[7 + i], id, state, data)
    noteAdded(M, id, state, now)
    retried = retried + 1
    countWaiting(M, id, 1, #data) -- it waits again (bytes.lua)
  end
end
if #leaving > 0 then redis.call('ZREM', KEYS[4], unpack(leaving)) end
countJobs(M, retried) -- ended, they live again
flushBatch(K, B)
saveMeta(M)
return { 1, retried, redis.call('ZCARD', KEYS[4]), dueReport(M, now), M.events }
