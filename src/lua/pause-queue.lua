#!lua flags=allow-key-locking
--[[ pause-queue: pauses or resumes a whole queue. Paused: enqueue still accepted, nothing new
is reserved, active jobs finish. Resuming makes the queue's tick due now, to drain what waited.

KEYS[1] meta  hash  config and counters (meta.lua)

ARGV[1] '1' pause | '0' resume
ARGV[2] now (epoch ms)

Returns {1, paused 0|1, dueAt}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta

local now = tonumber(ARGV[2])
local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end
if ARGV[1] == '1' then
  metaSet(M, 'paused', '1')
else
  metaSet(M, 'paused', false)
  noteTimer(M, now)
end
saveMeta(M)
return { 1, ARGV[1] == '1' and 1 or 0, dueReport(M, now) }
