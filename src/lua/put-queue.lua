#!lua flags=allow-key-locking
--[[ put-queue: creates a queue or replaces its whole config (validated by the caller). The
queue's next tick is made due now, so a changed config (retention, concurrency) takes effect.
Every config carries a `revision`, one more than the config it replaces: a queue's own (or its
root's) config is written only over the revision its writer read (compare-and-set), so of two
concurrent PATCHes the later one reads again and merges into the earlier one's result, never
over it; a partition's copy is never replaced by a lower revision (writes to several databases
may land out of order). A config stored before revisions counts as revision 0.

KEYS[1] meta  hash  config and counters (meta.lua)

ARGV[1] now (epoch ms)
ARGV[2] config JSON (validated and defaulted by the caller)
ARGV[3] a random secret, kept if the queue has one (lease tokens derive from it)
ARGV[4] 'root': the meta is a partitioned queue's root (errors.lua refuseRoot): it keeps the
        config and the count, and has no timer; '' a queue's or a partition's own
ARGV[5] the revision its writer read: a number, 'none' (no queue yet), or '' for a partition's
        copy (written unless the partition holds a higher revision)

Returns {1, created 0|1, previous config JSON or '' (what this call replaced), dueAt}
Errors  {-8} QUEUE_DELETING: the queue is still being deleted (the caller finishes that first);
  {-15, partitions} PARTITIONS_FIXED: the config asks for another count than the queue's;
  {-16} CONFIG_CHANGED: the config is no longer the revision ARGV[5] names (the caller reads again)
]]
-- @include errors
-- @include job
-- @include meta

local now, root, read = tonumber(ARGV[1]), ARGV[4] == 'root', ARGV[5]
local config = cjson.decode(ARGV[2])
local partitions = config.partitions or 1
local M = openMeta(KEYS[1], { 'deleting' }, true)
if M.v.deleting then return { QUEUE_DELETING } end
local previous = M.v.config or ''
if M.cfg and (M.cfg.partitions or 1) ~= partitions then return { PARTITIONS_FIXED, M.cfg.partitions or 1 } end
local revision = M.cfg and (M.cfg.revision or 0)
if read ~= '' and read ~= (revision and tostring(revision) or 'none') then return { CONFIG_CHANGED } end
if read == '' and revision and revision > (config.revision or 0) then return { 1, 0, previous, -1 } end
metaSet(M, 'config', ARGV[2])
if not M.v.secret then metaSet(M, 'secret', ARGV[3]) end
-- A new queue holds no job: its count (quota.lua) starts known, never computed from its keys.
if previous == '' and not M.v.live then metaSet(M, 'live', '0') end
if root then metaSet(M, 'partitions', tostring(partitions)) else noteTimer(M, now) end
saveMeta(M)
return { 1, previous == '' and 1 or 0, previous, dueReport(M, now) }
