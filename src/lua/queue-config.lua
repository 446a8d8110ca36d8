#!lua flags=no-writes,allow-key-locking
--[[ queue-config: a queue's stored config, for the checks a request needs before it runs
(publish tokens, CORS origins). Two commands with the EVALSHA.

KEYS[1] meta  hash  config, paused flag

Returns {1, config JSON}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors

-- A moved queue's config is where it went (refuseMoving); one being moved still reads here.
local found = redis.call('HMGET', KEYS[1], 'config', 'move')
refuseMoving(found[2], true)
if not found[1] then return { QUEUE_NOT_FOUND } end
return { 1, found[1] }
