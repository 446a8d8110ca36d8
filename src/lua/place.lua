#!lua flags=allow-key-locking
--[[ place: records on which database of the pool each of a queue's parts lives (the queue, or
a partitioned queue's root and partitions: src/core/store/pool.ts), once, before their first
write. Runs on the control database (database 0).

KEYS[1] gq:queues     set   queue names
KEYS[2] gq:placement  hash  queue name or partition tag -> database index

ARGV[2i-1] a queue name or partition tag (`<queue>:<p>`)
ARGV[2i]   the database chosen for it

Returns {1, {database...}}, one per name: the recorded one if there was one; 0 for a queue the
  registry lists without a record, and its partitions (created before the pool grew, it lives on
  database 0); else the one chosen, recorded
]]
local databases, record = {}, {}
for i = 1, #ARGV, 2 do
  local name, database = ARGV[i], redis.call('HGET', KEYS[2], ARGV[i])
  if not database then
    database = ARGV[i + 1]
    local queue = string.match(name, '^[^:]+')
    if redis.call('SISMEMBER', KEYS[1], queue) == 1 and not redis.call('HGET', KEYS[2], queue) then database = '0' end
    record[#record + 1] = name
    record[#record + 1] = database
  end
  databases[#databases + 1] = tonumber(database)
end
if #record > 0 then redis.call('HSET', KEYS[2], unpack(record)) end
return { 1, databases }
