--[[ get-job: one job as the API shows it.

KEYS[1] meta    hash  config
KEYS[2] jobs    hash  id -> job record
KEYS[3] active  zset  leased job ids by lease deadline

ARGV[1] id

Returns {1, {id, state JSON, data, state, startedAt, expiresAt, maxAttempts}}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND
]]
-- @include job
-- @include view

local K = { jobs = KEYS[2], active = KEYS[3] }
local cfgJson = redis.call('HGET', KEYS[1], 'config')
if not cfgJson then return { -1 } end
local raw = redis.call('HGET', K.jobs, ARGV[1])
if not raw then return { -2 } end
return { 1, jobView(K, cjson.decode(cfgJson), ARGV[1], raw) }
