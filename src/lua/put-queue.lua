#!lua flags=allow-key-locking
--[[ put-queue: creates a queue or replaces its whole config (validated by the caller). The
queue's next tick is made due now, so a changed config (retention, concurrency) takes effect.

KEYS[1] meta  hash  config and counters (meta.lua)

ARGV[1] now (epoch ms)
ARGV[2] config JSON (validated and defaulted by the caller)
ARGV[3] a random secret, kept if the queue has one (lease tokens derive from it)

Returns {1, created 0|1, previous config JSON or '', dueAt} (the caller unindexes the previous
  config's publish tokens)
Errors  {-8} QUEUE_DELETING: the queue is still being deleted (the caller finishes that first)
]]
-- @include errors
-- @include job
-- @include meta

local now = tonumber(ARGV[1])
local M = openMeta(KEYS[1], { 'deleting' })
if M.v.deleting then return { QUEUE_DELETING } end
local previous = M.v.config or ''
metaSet(M, 'config', ARGV[2])
if not M.v.secret then metaSet(M, 'secret', ARGV[3]) end
-- A new queue holds no job: its count (quota.lua) starts known, never computed from its keys.
if previous == '' and not M.v.live then metaSet(M, 'live', '0') end
noteTimer(M, now)
saveMeta(M)
return { 1, previous == '' and 1 or 0, previous, dueReport(M, now) }
