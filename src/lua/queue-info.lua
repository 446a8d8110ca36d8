#!lua flags=no-writes,allow-key-locking
--[[ queue-info: a queue's config, paused flag and counts, all O(1) reads.
waiting = jobs - active - delayed - completed - failed - cancelled (every record is in exactly
one state);
groups = idle groups in ready + held groups + active groups (each busy group has one lease);
meta's counters give `active` and `ready` without a command.

KEYS[1] meta       hash  config and counters (meta.lua)
KEYS[2] jobs       hash  id -> job record
KEYS[3] ready      zset  idle group heads
KEYS[4] active     zset  lease members
KEYS[5] held       zset  held or parked groups
KEYS[6] delayed    zset  delayed job ids
KEYS[7] completed  zset  kept completed job ids
KEYS[8] failed     zset  kept failed job ids
KEYS[9] cancelled  zset  kept cancelled job ids

Returns {1, config JSON, paused 0|1, waiting, delayed, active, completed, failed, groups, cancelled}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta

local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end
local active, idle = metaNum(M, 'active'), metaNum(M, 'ready')
local delayed = redis.call('ZCARD', KEYS[6])
local completed = redis.call('ZCARD', KEYS[7])
local failed = redis.call('ZCARD', KEYS[8])
local cancelled = redis.call('ZCARD', KEYS[9])
local waiting = redis.call('HLEN', KEYS[2]) - active - delayed - completed - failed - cancelled
local groups = idle + redis.call('ZCARD', KEYS[5]) + active
return { 1, M.v.config, M.v.paused and 1 or 0, waiting, delayed, active, completed, failed, groups, cancelled }
