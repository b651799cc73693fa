-- RIGHT interval join without an equality key (one global partition, as in Flink): every
-- reading from 2 seconds before to 1 second after an alarm.
SELECT a.code, a.at_ts, s.sensor, s.temp
FROM sensors s RIGHT JOIN alarms a
ON s.ts BETWEEN a.at_ts - INTERVAL '2' SECOND AND a.at_ts + INTERVAL '1' SECOND
