-- Job TTL (docs/flow-control.md#job-ttl): a job with a deadline to start (state `x`, its
-- enqueue time + ttlMs) that has not started by then ends `expired`, and is never delivered.
-- The TTL bounds the time to start only: a job that started once no longer expires.
--
-- `expiring` zset: '<id> <group>' (the delayed member's shape, job.lua) of each TTL job that has
-- not started, by its deadline. The enqueue adds it and notes the deadline as a timer (so the
-- scheduler visits the queue only when something is due); its start (reserve.lua), cancel or
-- removal takes it out; the tick expires the due ones (tick.lua). meta `expiring` is '1' once a
-- job with a TTL was enqueued: a queue that never had one never reads the zset, and a job
-- without a TTL pays nothing for any of this. K needs expiring.

-- @include job
-- @include meta

-- Notes in batch B (group.lua) that new job `id` has a deadline to start; saveExpiries writes it.
local function noteExpiry(B, id, state)
  if not state.x then return end
  B.expiring = B.expiring or {}
  B.expiring[#B.expiring + 1] = state.x
  B.expiring[#B.expiring + 1] = delayedMember(id, state.g)
end

-- Writes what noteExpiry gathered: one ZADD per call, and the earliest deadline as a timer.
local function saveExpiries(K, B)
  local list = B.expiring
  if not list or #list == 0 then return end
  redis.call('ZADD', K.expiring, unpack(list))
  metaSet(B.M, 'expiring', '1')
  for i = 1, #list, 2 do noteTimer(B.M, list[i]) end
  B.expiring = nil
end

-- Whether a job that has not started is past its deadline at `now` (a job that started once
-- has `a` or no `x`: finish.lua drops it when an attempt ends).
local function pastDeadline(state, now)
  return state.x ~= nil and not state.a and state.x <= now
end

-- Takes the entries of jobs that leave before their deadline ({member, ...}): one ZREM.
local function dropExpiries(K, members)
  if #members > 0 then redis.call('ZREM', K.expiring, unpack(members)) end
end
