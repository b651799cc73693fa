-- Page views as they arrive from the web servers; event time may lag up to 5 seconds.
CREATE TABLE page_views (
  user_id STRING,
  url STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
);
