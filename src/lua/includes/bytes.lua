-- meta `bytes`: the data of the queue's waiting and delayed jobs, in bytes of JSON text (what
-- maxBytes bounds, quota.lua). A job adds its data's size as it comes to wait (enqueued, a
-- repeat's run, retried by hand, back after an attempt that will be retried) and takes it away
-- as it leaves waiting and delayed (leased, cancelled, removed, expired) or its data is replaced
-- (a debounce collapse, an update). The data is in hand at each of these steps, so the count
-- costs no command: it rides on meta's write (meta.lua). A queue created before the field
-- starts at 0, and the count never goes below 0.

-- @include meta

local function countBytes(M, delta)
  if delta ~= 0 then metaSet(M, 'bytes', int(math.max(0, metaNum(M, 'bytes') + delta))) end
end
