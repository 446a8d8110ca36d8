#!lua flags=allow-key-locking
--[[ group-limits: sets or deletes one group's runtime limits (README, Flow control), kept in
meta as 'l:<group>' while the group has no jobs too. They apply to the group's next start.

KEYS[1] meta           hash  config and counters (meta.lua)
KEYS[2] jobs           hash  id -> job record
KEYS[3] ready          zset  idle group heads
KEYS[4] held           zset  held or parked groups
KEYS[5] paused-groups  set   paused group names
KEYS[6] prioritized    zset  idle group heads with a priority other than 0
KEYS[7] group          zset  the group's jobs

ARGV[1] now (epoch ms)
ARGV[2] group
ARGV[3] the limits as JSON ({"concurrency"?, "rateLimit"?}), or '' to delete them

Returns {1, limits JSON ('' = none), dueAt}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta

local now, field, limits = tonumber(ARGV[1]), 'l:' .. ARGV[2], ARGV[3]
local M = openMeta(KEYS[1], { field })
if not M.cfg then return { QUEUE_NOT_FOUND } end
metaSet(M, field, limits ~= '' and limits or false)
saveMeta(M)
return { 1, limits, dueReport(M, now) }
