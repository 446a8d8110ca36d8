#!lua flags=no-writes,allow-key-locking
--[[ get-job: one job as the API shows it.

KEYS[1] meta    hash  config
KEYS[2] jobs    hash  id -> job record
KEYS[3] active  zset  lease members by lease deadline

ARGV[1] id

Returns {1, {id, state JSON, data, state, startedAt, expiresAt, maxAttempts, history JSON?}}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include view

local K = { jobs = KEYS[2], active = KEYS[3] }
local M, raw, err = loadJob(KEYS[1], K.jobs, ARGV[1])
if err then return err end
return { 1, jobView(K, M, ARGV[1], raw, true) }
