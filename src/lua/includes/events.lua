-- Job events (src/protocol/events.ts, docs/events.md): the changes of jobs a script
-- makes, returned as the last element of its reply while meta's `ev` ("events wanted until",
-- epoch ms, set by want-events.lua when a stream may listen) is later than the call's now.
-- At no command either way: `ev` comes with the HMGET of meta every script makes (meta.lua), and
-- the list rides in the reply the caller reads anyway. Without `ev`, or past it, M.events is nil,
-- noteEvent does nothing and the reply ends where it always did (a nil last element is none).
-- A past `ev` is left in place (deleting it would cost an HDEL): it costs its bytes only.
--
-- The list starts with its place in the partition's event sequence (meta.lua placeEvents, which
-- saveMeta calls, and progress.lua itself): {epoch, last, numbered, events...}.
-- Each event is a flat tuple, decoded by src/core/store/events.ts:
--   {kind, id, group, state, attempt, at, ...} then by kind
--   added     'waiting'|'delayed', runAt (a delayed job's, else -1)
--   active    'active'
--   progress  'active', progress JSON text
--   retrying  'waiting', error, retryAt
--   completed 'completed', result JSON text ('' none), truncated 0|1
--   failed    'failed', error
--   cancelled 'cancelled'
--   expired   'expired', expiresAt (its deadline to start)
-- `attempt` is the job's attempts counted so far, the one under way included (an `active` or
-- `progress` event counts the attempt it starts or reports on).

-- Whether events are wanted at `now`, given meta's `ev` (false or nil: never asked for).
local function eventsWanted(ev, now)
  return ev and now and now < (tonumber(ev) or 0) or false
end

-- Starts the call's event list when events are wanted (after openMeta). `now` starts the
-- partition's event sequence if this call numbers its first events (placeEvents).
local function openEvents(M, now)
  if eventsWanted(M.v.ev, now) then
    M.events = {}
    M.eventsAt = now
  end
end

local function noteEvent(M, kind, id, group, state, attempt, now, a, b)
  local list = M.events
  if not list then return end
  -- Placed (saveMeta ran): a later event would get no number of its own. A bug, said loudly.
  if M.placed then error('groupq: job event noted after saveMeta') end
  list[#list + 1] = { kind, id, group, state, attempt, now, a, b }
end

-- A job that entered waiting or delayed (its state `st` says which): enqueued, promoted, retried
-- by hand, moved by a change of its start.
local function noteAdded(M, id, state, now)
  if not M.events then return end
  local delayed = state.st == 'delayed'
  noteEvent(M, 'added', id, state.g, delayed and 'delayed' or 'waiting', state.a or 0, now, delayed and state.ra or -1)
end
