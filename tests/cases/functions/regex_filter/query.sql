SELECT auction, url,
  REGEXP_EXTRACT(url, '(&|^|\?)channel_id=([^&]*)', 2) AS channel_id
FROM bids
WHERE REGEXP_EXTRACT(url, '(&|^|\?)channel_id=([^&]*)', 2) IS NOT NULL
