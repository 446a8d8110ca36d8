#!lua flags=no-writes,allow-key-locking
--[[ queue-config: a queue's stored config, for the checks a request needs before it runs
(publish tokens, CORS origins). Two commands with the EVALSHA.

KEYS[1] meta  hash  config, paused flag

Returns {1, config JSON}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors

local config = redis.call('HGET', KEYS[1], 'config')
if not config then return { QUEUE_NOT_FOUND } end
return { 1, config }
