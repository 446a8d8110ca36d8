#!lua flags=no-writes,allow-key-locking
--[[ get-minutes: the queue's per-minute counters of ended attempts (the ring in meta, see
meta.lua), as stored; the caller picks the last 60 minutes and drops slots that hold an older
minute.
The ring moved from '<c|f|r>:<slot>' to 'm:<c|f|r>:<slot>' (issue 16: 'f:<slot>' was also the
flow state of group "<slot>"); the old fields are read too, in the same command, so the hour
written before the move still shows. A value that is not a number there is a group's flow state.

KEYS[1] meta  hash  config and counters: 'm:<c|f|r>:<minute % 60>' -> epoch minute * 1e8 + count

Returns {1, {value of c:0, c:1, ... c:59, f:0, ... f:59, r:0, ... r:59}} (false where unset)
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors

local COUNT_SPAN = 100000000
if not hasQueue(KEYS[1]) then return { QUEUE_NOT_FOUND } end
local fields = {}
for _, prefix in ipairs({ 'm:', '' }) do
  for _, kind in ipairs({ 'c', 'f', 'r' }) do
    for slot = 0, 59 do fields[#fields + 1] = prefix .. kind .. ':' .. slot end
  end
end
local values = redis.call('HMGET', KEYS[1], unpack(fields))
local out = {}
for i = 1, 180 do
  local new, old = tonumber(values[i]), tonumber(values[180 + i])
  if new and old and math.floor(new / COUNT_SPAN) == math.floor(old / COUNT_SPAN) then
    new = new + old % COUNT_SPAN -- the minute of the move: counted in both rings
  elseif old and (not new or old > new) then
    new = old
  end
  out[i] = new and string.format('%.0f', new) or false
end
return { 1, out }
