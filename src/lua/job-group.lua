#!lua flags=no-writes,allow-key-locking
--[[ job-group: the group and enqueue sequence of a job, read before a script that must declare
the job's group key (a lease callback, an operation on one job by id).

KEYS[1] meta  hash  config (the queue must exist)
KEYS[2] jobs  hash  id -> job record

ARGV[1] id
ARGV[2] now (epoch ms; optional: a lease callback's, see `attempt`)

Returns {1, group, sequence, record (1: settle reads the job's record: a callback URL of its own,
         or its end kept for a waiter, finish.lua keepResult; else 0),
         named (1: its producer named its id, else 0), attempt?}
  attempt: the attempt under way if it were leased, only while meta's `ev` is later than now
  (events.lua): settle's `completed` event then needs no read of the record
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include events

-- hasQueue's one HMGET (errors.lua), with `ev` read along.
local found = redis.call('HMGET', KEYS[1], 'config', 'partitions', 'move', 'ev')
refuseRoot(found[2])
refuseMoving(found[3])
if not found[1] then return { QUEUE_NOT_FOUND } end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return { JOB_NOT_FOUND } end
local state = decodeJob(raw)
local attempt = eventsWanted(found[4], tonumber(ARGV[2])) and (state.a or 0) + 1 or nil
return { 1, state.g, state.s, (state.cb or state.w) and 1 or 0, state.i and 1 or 0, attempt }
