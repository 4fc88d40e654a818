DROP TABLE oauth_subject_rate;
