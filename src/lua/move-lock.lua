#!lua flags=allow-key-locking
--[[ move-lock: the lease that lets one move of a partition (or of a whole queue) run at a time
(src/core/engine/move.ts). A move takes it before anything else and renews it as it goes; a
move cut off (its Worker died) holds it only until the lease runs out, then the next call takes
it over and finishes or undoes what was left. Runs on the control database (database 0).

KEYS[1] gq:moves  hash  partition tag -> the move under way: '<owner> <lease end> <database>'

ARGV[1] take | renew | end
ARGV[2] the partition tag (a queue's name for a queue of one partition)
ARGV[3] the move's owner: a random id of its own
ARGV[4] now, epoch ms
ARGV[5] the lease's end, epoch ms (take, renew)
ARGV[6] the database the move goes to (take)

Returns {1, 1} taken, renewed or ended (end: also when this move no longer held it); {1, 0, the
  other move's database} another move holds it (take: its lease has not run out; renew: it took
  the lease over after this one's ran out); {1, 0, -1} renew: no move holds it (it was ended)
]]
local action, tag, owner, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local held = redis.call('HGET', KEYS[1], tag)
local holder, leaseEnd, database
if held then holder, leaseEnd, database = string.match(held, '^(%S+) (%d+) (%d+)$') end

if action == 'end' then
  if holder == owner then redis.call('HDEL', KEYS[1], tag) end
  return { 1, 1 }
end
if holder and holder ~= owner and (action == 'renew' or tonumber(leaseEnd) > now) then
  return { 1, 0, tonumber(database) }
end
if action == 'renew' and not holder then return { 1, 0, -1 } end
redis.call('HSET', KEYS[1], tag, owner .. ' ' .. ARGV[5] .. ' ' .. (action == 'take' and ARGV[6] or database))
return { 1, 1 }
