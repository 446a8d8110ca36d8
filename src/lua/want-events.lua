#!lua flags=allow-key-locking
--[[ want-events: asks the queue's scripts to return the job events they cause until `until`
(meta's `ev`, events wanted until: events.lua). Called when a stream may listen, before the
events it will ask for happen; a call with an earlier time than the one stored changes nothing,
so two callers (two Workers, whose clocks differ a little) never cut each other's window short.
The flag lapses by itself: scripts compare it with their own now. One call per partition.

KEYS[1] meta  hash  config and counters (meta.lua)

ARGV[1] until (epoch ms)

Returns {1, until (epoch ms) as now stored}
Errors  {-1} QUEUE_NOT_FOUND
Costs   the HMGET of meta, and one HSET when the time moves later.
]]
-- @include errors
-- @include job
-- @include meta

local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end
local wanted = tonumber(ARGV[1])
if wanted > (tonumber(M.v.ev) or 0) then metaSet(M, 'ev', int(wanted)) end
saveMeta(M)
return { 1, tonumber(M.v.ev) }
