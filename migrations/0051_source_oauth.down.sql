DROP TABLE source_oauth_pending;
DROP TABLE source_oauth;
