#!lua flags=no-writes,allow-key-locking
--[[ get-job: one job as the API shows it, with its callback URL and how its outcome callback
is going (outcome.lua): the pending record while there is one, else the summary the job's
record keeps.

KEYS[1] meta             hash  config
KEYS[2] jobs             hash  id -> job record
KEYS[3] active           zset  lease members by lease deadline
KEYS[4] outcome-records  hash  job id -> pending outcome record

ARGV[1] id

Returns {1, {id, state JSON, data, state, startedAt, expiresAt, maxAttempts, history JSON?},
         callbackUrl ('' = none), outcome ('' = none; a pending record's JSON, or '{"st":...}' the summary)}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include view

local K = { jobs = KEYS[2], active = KEYS[3] }
local M, raw, err = loadJob(KEYS[1], K.jobs, ARGV[1])
if err then return err end
local state = decodeJob(raw)
local url = state.cb or M.cfg.callbackUrl
local outcome = ''
if url then
  outcome = redis.call('HGET', KEYS[4], ARGV[1]) or (state.oc and cjson.encode(state.oc)) or ''
end
return { 1, jobView(K, M, ARGV[1], raw, true), url or '', outcome }
