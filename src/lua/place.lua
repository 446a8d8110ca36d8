#!lua flags=allow-key-locking
--[[ place: records on which database of the pool a queue lives (src/core/store/pool.ts), once,
before the queue's first write. Runs on the control database (database 0).

KEYS[1] gq:queues     set   queue names
KEYS[2] gq:placement  hash  queue name -> database index

ARGV[1] queue name
ARGV[2] the database rendezvous hashing chose for it

Returns {1, database}: the recorded one if there was one; 0 for a queue the registry lists
  without a record (created before the pool grew, it lives on database 0); else ARGV[2], recorded
]]
local recorded = redis.call('HGET', KEYS[2], ARGV[1])
if recorded then return { 1, tonumber(recorded) } end
local database = ARGV[2]
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then database = '0' end
redis.call('HSET', KEYS[2], ARGV[1], database)
return { 1, tonumber(database) }
